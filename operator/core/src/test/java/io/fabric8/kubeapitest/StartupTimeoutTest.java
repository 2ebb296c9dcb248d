package io.fabric8.kubeapitest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The API server's start budget the pom gives every test JVM (KUBE_API_TEST_STARTUP_TIMEOUT)
 * reaches kube-api-test's config: with kube-api-test 7.4.0's own builder the variable threw a
 * ClassCastException, and without it the budget is 60 s (see the shadowing {@link
 * KubeAPIServerConfigBuilder}).
 */
class StartupTimeoutTest {

  @Test
  void thePomsStartupBudgetReachesTheConfig() {
    String set = System.getenv(KubeAPIServerConfigBuilder.KUBE_API_TEST_STARTUP_TIMEOUT);
    assertThat(set).as("the pom sets KUBE_API_TEST_STARTUP_TIMEOUT for the tests").isNotBlank();
    assertThat(KubeAPIServerConfigBuilder.anAPIServerConfig().build().getStartupTimeout())
        .isEqualTo(Integer.parseInt(set.trim()))
        .isGreaterThan(60_000);
  }
}
