import COpenSSL

/// The one place OpenSSL return codes become `JWTError`s.
enum OpenSSL {
    /// Throws when `result` is not 1 (OpenSSL's success), with the queued OpenSSL error text.
    static func check(_ result: Int32, _ code: JWTError.Code, _ what: String, source: String? = nil) throws {
        guard result == 1 else { throw failure(code, what, source: source) }
    }

    /// Throws when an OpenSSL constructor returned NULL.
    static func check<T>(_ pointer: T?, _ code: JWTError.Code, _ what: String, source: String? = nil) throws -> T {
        guard let pointer else { throw failure(code, what, source: source) }
        return pointer
    }

    /// A `JWTError` carrying and clearing OpenSSL's error queue of this thread.
    static func failure(_ code: JWTError.Code, _ what: String, source: String? = nil) -> JWTError {
        let detail = drainErrors()
        return JWTError(code, detail.isEmpty ? what : "\(what): \(detail)", source: source)
    }

    /// Empties this thread's error queue, returning its messages joined.
    @discardableResult
    static func drainErrors() -> String {
        var buffer = [CChar](repeating: 0, count: 1024)
        countdown_openssl_drain_errors(&buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
