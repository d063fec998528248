import CCurl
import Glibc

/// The one place libcurl result codes become `HTTPClientError`s, and the once-per-process global init.
enum Curl {
    private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// Runs `curl_global_init` the first time it is called (libcurl requires it before any handle exists).
    static func ensureGlobalInit() throws {
        if globalInit != CURLE_OK { throw error(globalInit, message: "curl_global_init failed") }
    }

    /// `what` is built only on failure: every request sets a dozen options through here.
    static func check(_ code: CURLcode, _ what: @autoclosure () -> String) throws {
        if code != CURLE_OK { throw error(code, message: "\(what()): \(String(cString: curl_easy_strerror(code)))") }
    }

    static func check(_ code: CURLMcode, _ what: @autoclosure () -> String) throws {
        if code != CURLM_OK {
            throw HTTPClientError(.other, "\(what()): \(String(cString: curl_multi_strerror(code)))")
        }
    }

    /// Classifies a failed transfer. `osErrno` tells a refused connection from other connect failures; `connected`
    /// (whether any request bytes went out) tells a connect timeout from a transfer timeout.
    static func error(_ code: CURLcode, message: String, url: String? = nil, osErrno: Int = 0, connected: Bool = true) -> HTTPClientError {
        let kind: HTTPClientError.Code
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_BAD_FUNCTION_ARGUMENT:
            kind = .invalidRequest
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            kind = .cannotResolveHost
        case CURLE_COULDNT_CONNECT:
            kind = osErrno == Int(ECONNREFUSED) ? .connectionRefused : .connectFailed
        case CURLE_OPERATION_TIMEDOUT:
            kind = connected ? .timeout : .connectTimeout
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED,
             CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
             CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            kind = .tls
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM,
             CURLE_WEIRD_SERVER_REPLY, CURLE_READ_ERROR, CURLE_HTTP3:
            kind = .io
        default:
            kind = .other
        }
        return HTTPClientError(kind, message, url: url, curlCode: Int32(bitPattern: code.rawValue))
    }
}
