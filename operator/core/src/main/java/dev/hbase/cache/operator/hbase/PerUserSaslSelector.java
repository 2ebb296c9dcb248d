package dev.hbase.cache.operator.hbase;

import java.util.Collection;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.security.User;
import org.apache.hadoop.hbase.security.provider.AuthenticationProviderSelector;
import org.apache.hadoop.hbase.security.provider.GssSaslClientAuthenticationProvider;
import org.apache.hadoop.hbase.security.provider.SaslClientAuthenticationProvider;
import org.apache.hadoop.hbase.security.provider.SaslClientAuthenticationProviders;
import org.apache.hadoop.hbase.security.provider.SimpleSaslClientAuthenticationProvider;
import org.apache.hadoop.hbase.util.Pair;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.security.token.TokenIdentifier;

/**
 * Chooses each HBase RPC connection's authentication from the user it is made as: Kerberos for a
 * user with Kerberos credentials (a {@link KerberosLogin}), SIMPLE for any other.
 *
 * <p>Why: HBase 2.6.4 keeps one provider selector per JVM ({@link
 * SaslClientAuthenticationProviders#getInstance}), configured by the first connection's
 * configuration; its built-in selector offers SIMPLE only when that first configuration says {@code
 * hbase.security.authentication=simple}. An operator that first connected to an unsecured cluster
 * then spoke SIMPLE to every secured one ("SimpleSaslClientAuthenticationProvider returned a null
 * SaslClient": seen in make test-hbase when SecuredClusterIT ran after the unsecured classes). This
 * selector decides per connection instead, and {@link #install} puts it in place.
 */
public final class PerUserSaslSelector implements AuthenticationProviderSelector {
  private SaslClientAuthenticationProvider simple;
  private SaslClientAuthenticationProvider kerberos;

  @Override
  public void configure(
      Configuration conf, Collection<SaslClientAuthenticationProvider> providers) {
    for (SaslClientAuthenticationProvider p : providers) {
      if (p instanceof SimpleSaslClientAuthenticationProvider) {
        simple = p;
      } else if (p instanceof GssSaslClientAuthenticationProvider) {
        kerberos = p;
      }
    }
  }

  @Override
  public Pair<SaslClientAuthenticationProvider, Token<? extends TokenIdentifier>> selectProvider(
      String clusterId, User user) {
    UserGroupInformation ugi = user.getUGI();
    UserGroupInformation real = ugi.getRealUser();
    boolean kerberosUser =
        ugi.hasKerberosCredentials() || (real != null && real.hasKerberosCredentials());
    return new Pair<>(kerberosUser ? kerberos : simple, null);
  }

  /**
   * Makes this the JVM's selector if another is in place (the first connection made with a
   * configuration without {@link SaslClientAuthenticationProviders#SELECTOR_KEY} installed HBase's
   * own). Connections made before keep what they chose.
   */
  static synchronized void install(Configuration conf) {
    String ours = "selector=" + PerUserSaslSelector.class.getName();
    if (!SaslClientAuthenticationProviders.getInstance(conf).toString().contains(ours)) {
      SaslClientAuthenticationProviders.reset();
      SaslClientAuthenticationProviders.getInstance(conf);
    }
  }

  /** Sets this selector in a client configuration. */
  public static Configuration select(Configuration conf) {
    conf.set(SaslClientAuthenticationProviders.SELECTOR_KEY, PerUserSaslSelector.class.getName());
    return conf;
  }
}
