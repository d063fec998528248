import Foundation
import HTTPServer
import Synchronization

/// The newest token requests and the newest sends as received, with the answers given (`GET /fake/requests`): what a client
/// really sent (headers, body bytes) and which access token it was handed, for tests of a push client.
final class RequestLog: Sendable {
    /// Which endpoint a request went to: the fake FCM's `token` and `send`; the fake APNs' `device` (token pushes),
    /// `broadcast` and `channels` (channel management).
    enum Kind: String, Sendable, Codable {
        case token, send
        case device, broadcast, channels
    }

    /// One request as `GET /fake/requests` shows it.
    struct Entry: Encodable, Sendable {
        /// Increases by one per request recorded, across resets.
        let seq: Int
        let kind: Kind
        let method: String
        /// The decoded path, without the query.
        let path: String
        /// Header names in lower case.
        let headers: [String: String]
        /// The request body as text.
        let body: String
        /// The answer's status; 0 when the connection was dropped without one.
        let status: Int
        /// The answer's body as text.
        let answer: String
    }

    /// Kept as received: the request and response values share their storage, so recording copies nothing.
    private struct Kept: Sendable {
        let seq: Int
        let kind: Kind
        let request: HTTPRequest
        let response: HTTPResponse
    }

    private struct State {
        var kept: [Kind: [Kept]] = [:]
        var nextSeq = 1
    }

    let capacity: Int
    private let state = Mutex(State())

    /// - Parameter capacity: requests kept of each kind, oldest dropped first; 0 keeps none.
    init(capacity: Int) { self.capacity = capacity }

    func record(_ kind: Kind, _ request: HTTPRequest, _ response: HTTPResponse) {
        guard capacity > 0 else { return }
        state.withLock { state in
            state.kept[kind, default: []].append(Kept(seq: state.nextSeq, kind: kind, request: request, response: response))
            state.nextSeq += 1
            if let count = state.kept[kind]?.count, count > capacity * 2 { state.kept[kind]?.removeFirst(count - capacity) }
        }
    }

    /// The kept requests, oldest first, optionally of one kind.
    func entries(kind: Kind?) -> [Entry] {
        let kept = state.withLock { state in
            state.kept.filter { kind == nil || $0.key == kind }.values.flatMap { $0.suffix(capacity) }.sorted { $0.seq < $1.seq }
        }
        return kept.map { kept in
            Entry(
                seq: kept.seq, kind: kept.kind, method: kept.request.method, path: kept.request.path,
                headers: Self.headers(of: kept.request), body: String(decoding: kept.request.body, as: UTF8.self),
                status: kept.response.dropsConnection ? 0 : kept.response.status, answer: String(decoding: kept.response.body, as: UTF8.self))
        }
    }

    /// A request's headers by lower-case name (a repeated one: its last value).
    static func headers(of request: HTTPRequest) -> [String: String] {
        Dictionary(request.headers.map { ($0.name.lowercased(), $0.value) }) { $1 }
    }

    /// Forgets the kept requests (`DELETE /fake/requests`); sequence numbers keep increasing.
    func reset() { state.withLock { $0.kept = [:] } }
}
