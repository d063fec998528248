import CMicroHTTPD
import Foundation
import HTTPTypes

/// The state of one request between the daemon's calls into the access handler.
///
/// Body fields are touched only on the connection's daemon thread. `phase` and `reply` belong to the
/// dispatcher's lock: an async handler finishes on another thread and hands its reply over through them.
final class RequestContext: @unchecked Sendable {
    enum Phase { case receiving, suspended, resumed }

    let connection: OpaquePointer
    let method: String
    let path: String
    var body = Data()
    /// A response (413) was queued before the body was read; later calls only discard data.
    var answeredEarly = false
    /// The body crossed the limit; the rest is counted and dropped, and the request answered `413`.
    var bodyTooLarge = false
    var discarded = 0

    var phase = Phase.receiving
    var reply: HTTPResponse?

    init(connection: OpaquePointer, method: String, path: String) {
        self.connection = connection
        self.method = method
        self.path = path
    }

    /// Collects the complete request from the daemon (headers, query, peer) plus the accumulated body.
    func makeRequest() -> HTTPRequest {
        var headers: [(name: String, value: String)] = []
        withUnsafeMutablePointer(to: &headers) { pointer in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, { context, _, key, value in
                guard let context, let key else { return .YES }
                context.assumingMemoryBound(to: [(name: String, value: String)].self).pointee
                    .append((name: String(cString: key), value: value.map { String(cString: $0) } ?? ""))
                return .YES
            }, pointer)
        }
        var query: [(name: String, value: String?)] = []
        withUnsafeMutablePointer(to: &query) { pointer in
            _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, { context, _, key, value in
                guard let context, let key else { return .YES }
                context.assumingMemoryBound(to: [(name: String, value: String?)].self).pointee
                    .append((name: String(cString: key), value: value.map { String(cString: $0) }))
                return .YES
            }, pointer)
        }
        let remote = countdown_mhd_client_address(connection).map(SocketAddressText.describe) ?? ""
        return HTTPRequest(method: method, path: path, query: query, headers: HTTPHeaders(headers), body: body, remoteAddress: remote)
    }
}
