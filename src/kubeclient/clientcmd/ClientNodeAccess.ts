import { KubeConfig } from "@kubernetes/client-node"
import type { ClusterAccess } from "./ClusterAccess.ts"
import type { KubeconfigContext } from "./Kubeconfig.ts"

/**
 * Access through client-node, for what needs more than static credentials: an `exec` credential plugin
 * (cloud CLIs), an `auth-provider` (oidc, gcp, azure) or a `proxy-url`. The context is the one the
 * kubeconfig files select; client-node runs the plugin, refreshes its credential and builds the proxy agent.
 * This module is imported only for such a kubeconfig, so the library is not loaded otherwise.
 */
export const clientNodeAccess = (context: KubeconfigContext): ClusterAccess => {
  const { cluster, user } = context
  const config = new KubeConfig()
  config.loadFromClusterAndUser(
    {
      name: context.clusterName,
      server: cluster.server,
      skipTLSVerify: cluster.insecureSkipTlsVerify,
      ...(cluster.certificateAuthority === undefined ? {} : { caFile: cluster.certificateAuthority }),
      ...(cluster.certificateAuthorityData === undefined ? {} : { caData: cluster.certificateAuthorityData }),
      ...(cluster.tlsServerName === undefined ? {} : { tlsServerName: cluster.tlsServerName }),
      ...(cluster.proxyUrl === undefined ? {} : { proxyUrl: cluster.proxyUrl }),
    },
    {
      name: context.userName === "" ? "user" : context.userName,
      ...(user.token === undefined ? {} : { token: user.token }),
      ...(user.clientCertificate === undefined ? {} : { certFile: user.clientCertificate }),
      ...(user.clientCertificateData === undefined ? {} : { certData: user.clientCertificateData }),
      ...(user.clientKey === undefined ? {} : { keyFile: user.clientKey }),
      ...(user.clientKeyData === undefined ? {} : { keyData: user.clientKeyData }),
      ...(user.username === undefined ? {} : { username: user.username }),
      ...(user.password === undefined ? {} : { password: user.password }),
      ...(user.impersonate === undefined ? {} : { impersonateUser: user.impersonate }),
      ...(user.exec === undefined ? {} : { exec: user.exec }),
      ...(user.authProvider === undefined ? {} : { authProvider: user.authProvider }),
    },
  )
  return { server: cluster.server, applyTo: (options) => config.applyToHTTPSOptions(options) }
}
