/// How to verify the server on a `rediss://` connection (and prove the client's identity, when asked to).
public struct RedisTLS: Sendable, Equatable {
    /// PEM file of the CA certificates to trust (`REDIS_TLS_CA_FILE`); `nil` trusts the system's CAs.
    public var caFile: String?
    /// PEM client certificate chain (`REDIS_TLS_CERT_FILE`), for servers that require client certificates.
    public var certificateFile: String?
    /// PEM private key of the client certificate (`REDIS_TLS_KEY_FILE`).
    public var keyFile: String?
    /// The name (or IP address) the server certificate must carry (`REDIS_TLS_SERVER_NAME`); `nil` uses the host.
    public var serverName: String?

    public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil, serverName: String? = nil) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.serverName = serverName
    }
}
