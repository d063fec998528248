import BlockingIO
import HTTPClient
import HTTPTypes

/// A fake `HTTPRequestSending` that records requests and answers from a script.
final class ScriptedHTTP: HTTPRequestSending {
    let requests = Locked<[HTTPRequest]>([])
    private let answer: @Sendable (HTTPRequest, Int) throws -> HTTPResponse

    /// `answer` gets each request and its 0-based index.
    init(_ answer: @escaping @Sendable (HTTPRequest, Int) throws -> HTTPResponse) {
        self.answer = answer
    }

    func sendAll(_ requests: [HTTPRequest], onAnswer: AnswerHook?) async -> [Result<HTTPResponse, HTTPClientError>] {
        requests.enumerated().map { position, request in
            let outcome = outcome(request)
            onAnswer?(position, outcome)
            return outcome
        }
    }

    private func outcome(_ request: HTTPRequest) -> Result<HTTPResponse, HTTPClientError> {
        let index = requests.withLock { requests in
            requests.append(request)
            return requests.count - 1
        }
        do {
            return .success(try answer(request, index))
        } catch {
            return .failure(error as? HTTPClientError ?? HTTPClientError(.other, "\(error)", url: request.url))
        }
    }

    static func response(_ status: Int, _ body: String = "", headers: HTTPHeaders = [:]) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: Array(body.utf8), httpVersion: "2")
    }
}
