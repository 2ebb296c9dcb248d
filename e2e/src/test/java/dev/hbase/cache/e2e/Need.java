package dev.hbase.cache.e2e;

/**
 * What a scenario class needs at its start ({@link KindScenario#needs()}): checked before its first
 * step, and established when it does not hold (then checked again). The suite's own are in {@link
 * Needs}. {@link #unmet} must be cheap (a few reads of the cluster, or of what the suite already
 * sampled): it runs at the start of every class that needs it, and most of the time it holds,
 * because the class before left it so. {@link #establish} is bounded (each of its waits has a
 * timeout) and may cost a roll; it runs only when {@link #unmet} said why not.
 *
 * <p>A need that could not be established is not tried again in the run: every later class that
 * needs it is reported as not run for that reason ({@link KindSuite}).
 */
interface Need {
  /** How the report names it, and the key under which a failure to establish it is remembered. */
  String name();

  /** Why it does not hold now, or null when it does. */
  String unmet(KindScenario s) throws Exception;

  /** Makes it hold, or throws. */
  void establish(KindScenario s) throws Exception;

  interface Check {
    String unmet(KindScenario s) throws Exception;
  }

  interface Action {
    void run(KindScenario s) throws Exception;
  }

  static Need of(String name, Check unmet, Action establish) {
    return new Need() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public String unmet(KindScenario s) throws Exception {
        return unmet.unmet(s);
      }

      @Override
      public void establish(KindScenario s) throws Exception {
        establish.run(s);
      }

      @Override
      public String toString() {
        return name;
      }
    };
  }
}
