import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// TLS over a socket the connection owns: OpenSSL encrypts into and decrypts from memory BIOs, and this type
/// carries the bytes with the socket's own deadlines. Owns its `SSL_CTX` and `SSL`.
final class RedisTLSSession: RedisByteStream {
    private let socket: RedisSocket
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    private let incoming: OpaquePointer
    private let outgoing: OpaquePointer
    private var scratch = [UInt8](repeating: 0, count: 16 * 1024)
    /// Whether this client presents a certificate (for the hint when the server drops it at once).
    private let presentsCertificate: Bool
    /// Whether the server sent anything after the handshake.
    private var answered = false

    /// Handshakes over `socket`, verifying the certificate chain and that the certificate names `serverName`.
    init(socket: RedisSocket, settings: RedisTLS, serverName: String, deadline: ContinuousClock.Instant) throws {
        self.socket = socket
        presentsCertificate = settings.certificateFile != nil
        let target = "TLS \(socket.endpoint)"
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw Self.failure(.connectionFailed, "SSL_CTX_new failed", target) }
        self.context = context
        do {
            // Before SSL_new: it copies the verify mode and the client certificate from the context.
            try Self.configure(context, settings: settings, target: target)
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        guard let ssl = SSL_new(context), let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
            SSL_CTX_free(context)
            throw Self.failure(.connectionFailed, "SSL_new failed", target)
        }
        SSL_set_bio(ssl, incoming, outgoing)
        self.ssl = ssl
        self.incoming = incoming
        self.outgoing = outgoing
        try expect(serverName: serverName, target: target)
        try handshake(serverName: serverName, deadline: deadline, target: target)
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    func write(_ bytes: UnsafeRawBufferPointer, deadline: ContinuousClock.Instant) throws {
        guard bytes.count > 0 else { return }
        ERR_clear_error()
        let written = SSL_write(ssl, bytes.baseAddress, Int32(bytes.count))
        guard written == Int32(bytes.count) else { throw Self.failure(.io, "TLS write failed", "write \(socket.endpoint)") }
        do {
            try flush(deadline: deadline)
        } catch let error as RedisError {
            throw hinted(error)
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: ContinuousClock.Instant, interrupt: WakePipe?) throws -> RedisSocket.Received {
        do {
            let received = try readDecrypted(into: buffer, deadline: deadline, interrupt: interrupt)
            if case .bytes = received { answered = true }
            return received
        } catch let error as RedisError {
            throw hinted(error)
        }
    }

    /// Under TLS 1.3 a server that requires client certificates refuses after the handshake, and the refusal may
    /// reach this client as a bare reset of its first command. A restarting server looks the same, so a connection
    /// lost before the server's first answer, by a client without a certificate, gets a hint, not a verdict.
    private func hinted(_ error: RedisError) -> RedisError {
        guard error.code == .io, !answered, !presentsCertificate else { return error }
        return RedisError(.io, "\(error.message), before the server's first answer (if it requires client certificates, "
                          + "set REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE)", context: error.context)
    }

    private func readDecrypted(into buffer: UnsafeMutableRawBufferPointer, deadline: ContinuousClock.Instant, interrupt: WakePipe?) throws -> RedisSocket.Received {
        while true {
            ERR_clear_error()
            let count = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
            if count > 0 { return .bytes(Int(count)) }
            let reason = SSL_get_error(ssl, count)
            try flush(deadline: deadline)
            switch reason {
            case SSL_ERROR_WANT_READ:
                switch try fill(deadline: deadline, interrupt: interrupt) {
                case .timedOut: return .timedOut
                case .interrupted: return .interrupted
                case .bytes: continue
                }
            case SSL_ERROR_ZERO_RETURN:
                throw RedisError(.io, "server closed the TLS session", context: "read \(socket.endpoint)")
            default:
                let error = Self.failure(.io, "TLS read failed", "read \(socket.endpoint)")
                guard error.message.contains("certificate required") else { throw error }
                throw RedisError(.connectionFailed, "\(error.message) (set REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE)", context: error.context,
                                 misconfigured: "REDIS_TLS_CERT_FILE")
            }
        }
    }

    // MARK: - Setup

    private static func configure(_ context: OpaquePointer, settings: RedisTLS, target: String) throws {
        func check(_ result: Int32, _ what: String, setting: String? = nil) throws {
            guard result == 1 else { throw failure(.connectionFailed, what, target, misconfigured: setting) }
        }
        try check(countdown_ssl_ctx_require_tls12(context), "cannot require TLS 1.2")
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if let caFile = settings.caFile {
            try check(SSL_CTX_load_verify_locations(context, caFile, nil), "REDIS_TLS_CA_FILE \(caFile) could not be loaded",
                      setting: "REDIS_TLS_CA_FILE")
        } else {
            try check(SSL_CTX_set_default_verify_paths(context), "the system CA certificates could not be loaded (set REDIS_TLS_CA_FILE)",
                      setting: "REDIS_TLS_CA_FILE")
        }
        if let certificateFile = settings.certificateFile, let keyFile = settings.keyFile {
            try check(SSL_CTX_use_certificate_chain_file(context, certificateFile), "REDIS_TLS_CERT_FILE \(certificateFile) could not be loaded",
                      setting: "REDIS_TLS_CERT_FILE")
            try check(SSL_CTX_use_PrivateKey_file(context, keyFile, SSL_FILETYPE_PEM), "REDIS_TLS_KEY_FILE \(keyFile) could not be loaded",
                      setting: "REDIS_TLS_KEY_FILE")
            try check(SSL_CTX_check_private_key(context), "REDIS_TLS_KEY_FILE does not match REDIS_TLS_CERT_FILE", setting: "REDIS_TLS_KEY_FILE")
        }
    }

    /// The name (or IP address) the certificate must carry; the name is also sent as SNI.
    private func expect(serverName: String, target: String) throws {
        if Self.isIPAddress(serverName) {
            try check(X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName), "bad server address \(serverName)", target)
        } else {
            try check(countdown_ssl_set_server_name(ssl, serverName), "bad server name \(serverName)", target)
            try check(SSL_set1_host(ssl, serverName), "bad server name \(serverName)", target)
        }
        SSL_set_connect_state(ssl)
    }

    private func handshake(serverName: String, deadline: ContinuousClock.Instant, target: String) throws {
        while true {
            ERR_clear_error()
            let result = SSL_do_handshake(ssl)
            try flush(deadline: deadline)
            if result == 1 { return }
            guard SSL_get_error(ssl, result) == SSL_ERROR_WANT_READ else { throw handshakeFailure(serverName: serverName, target: target) }
            do {
                if case .timedOut = try fill(deadline: deadline, interrupt: nil) {
                    throw RedisError(.connectionFailed, "TLS handshake timed out (is this a TLS port?)", context: target)
                }
            } catch let error as RedisError where error.code == .io {
                throw RedisError(.connectionFailed, "TLS handshake failed: \(error.message) (is this a TLS port?)", context: target)
            }
        }
    }

    /// One line saying why the server was not trusted, naming the setting to look at.
    private func handshakeFailure(serverName: String, target: String) -> RedisError {
        let verdict = SSL_get_verify_result(ssl)
        guard verdict == X509_V_OK else {
            let reason = String(cString: X509_verify_cert_error_string(verdict))
            let mismatch = verdict == X509_V_ERR_HOSTNAME_MISMATCH || verdict == X509_V_ERR_IP_ADDRESS_MISMATCH
            let setting = mismatch ? "REDIS_TLS_SERVER_NAME" : "REDIS_TLS_CA_FILE"
            let hint = mismatch ? "the certificate does not name \(serverName); check \(setting)" : "check \(setting)"
            Self.drainErrors()
            return RedisError(.connectionFailed, "certificate verify failed: \(reason) (\(hint))", context: target, misconfigured: setting)
        }
        return Self.failure(.connectionFailed, "TLS handshake failed", target)
    }

    // MARK: - Carrying bytes

    /// Sends whatever OpenSSL queued for the server.
    private func flush(deadline: ContinuousClock.Instant) throws {
        while BIO_ctrl_pending(outgoing) > 0 {
            let count = scratch.withUnsafeMutableBytes { BIO_read(outgoing, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { return }
            try scratch.withUnsafeBytes { try socket.write(UnsafeRawBufferPointer(rebasing: $0[..<Int(count)]), deadline: deadline) }
        }
    }

    /// Moves what the socket has (waiting until `deadline`) into OpenSSL's input.
    private func fill(deadline: ContinuousClock.Instant, interrupt: WakePipe?) throws -> RedisSocket.Received {
        let received = try scratch.withUnsafeMutableBytes { try socket.read(into: $0, deadline: deadline, interrupt: interrupt) }
        if case .bytes(let count) = received {
            let fed = scratch.withUnsafeBytes { BIO_write(incoming, $0.baseAddress, Int32(count)) }
            guard fed == Int32(count) else { throw Self.failure(.io, "TLS buffer write failed", "read \(socket.endpoint)") }
        }
        return received
    }

    // MARK: - Errors

    private func check(_ result: Int32, _ what: String, _ target: String) throws {
        guard result == 1 else { throw Self.failure(.connectionFailed, what, target) }
    }

    /// The single place OpenSSL's error queue becomes a `RedisError`.
    private static func failure(_ code: RedisError.Code, _ what: String, _ target: String, misconfigured: String? = nil) -> RedisError {
        let detail = drainErrors()
        return RedisError(code, detail.isEmpty ? what : "\(what): \(detail)", context: target, misconfigured: misconfigured)
    }

    @discardableResult
    private static func drainErrors() -> String {
        var buffer = [CChar](repeating: 0, count: 1024)
        countdown_openssl_drain_errors(&buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func isIPAddress(_ text: String) -> Bool {
        var storage = in6_addr()
        return inet_pton(AF_INET, text, &storage) == 1 || inet_pton(AF_INET6, text, &storage) == 1
    }
}
