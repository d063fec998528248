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
        let remote = countdown_mhd_client_address(connection).map(SocketAddressText.describe) ?? ""
        return HTTPRequest(
            method: method, path: path, query: values(.GET_ARGUMENT_KIND), headers: HTTPHeaders(headerFields()), body: body, remoteAddress: remote)
    }

    /// The request's header fields in order, repeated ones included (a field without a value has "").
    func headerFields() -> [(name: String, value: String)] {
        values(.HEADER_KIND).map { (name: $0.name, value: $0.value ?? "") }
    }

    /// The request's values of `kind` (headers, query arguments) in order; a key without a value has nil.
    private func values(_ kind: MHD_ValueKind) -> [(name: String, value: String?)] {
        var values: [(name: String, value: String?)] = []
        withUnsafeMutablePointer(to: &values) { pointer in
            _ = MHD_get_connection_values(connection, kind, { context, _, key, value in
                guard let context, let key else { return .YES }
                context.assumingMemoryBound(to: [(name: String, value: String?)].self).pointee
                    .append((name: String(cString: key), value: value.map { String(cString: $0) }))
                return .YES
            }, pointer)
        }
        return values
    }
}
