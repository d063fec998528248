/// Answers one request of a deferring handler, from any thread, once: later calls (and a call after the server
/// answered the request itself while stopping) are ignored.
public struct HTTPResponder: Sendable {
    private let answer: @Sendable (HTTPResponse) -> Void

    init(_ answer: @escaping @Sendable (HTTPResponse) -> Void) {
        self.answer = answer
    }

    public func callAsFunction(_ response: HTTPResponse) {
        answer(response)
    }
}
