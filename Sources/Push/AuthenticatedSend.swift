import HTTPClient

/// The send loop FCM and APNs share: get a bearer token, send, classify; when the service calls the token expired,
/// drop it and try exactly once more, and treat a second refusal as a configuration error (never spin).
struct AuthenticatedSend {
    let service: String
    let tokens: any AccessTokenProviding
    let http: any HTTPRequestSending

    func run(
        request: (_ bearer: String) -> HTTPRequest, classify: (HTTPResponse) -> PushOutcomeClassifier.Verdict
    ) async -> PushResult {
        await runAll(count: 1, request: { _, bearer in request(bearer) }, classify: classify)[0]
    }

    /// `count` requests sent together (one `sendAll` per round); those answered with an expired token are sent
    /// again, once, with a refreshed one. Results come back in request order.
    func runAll(
        count: Int, onAnswer: PushAnswerHook? = nil, request: (_ index: Int, _ bearer: String) -> HTTPRequest,
        classify: (HTTPResponse) -> PushOutcomeClassifier.Verdict
    ) async -> [PushResult] {
        var results = [PushResult?](repeating: nil, count: count)
        var pending = Array(0..<count)
        var refreshed = false
        while !pending.isEmpty {
            let bearer: String
            do {
                bearer = try await tokens.accessToken()
            } catch {
                for index in pending { results[index] = PushOutcomeClassifier.credentialsFailure(error) }
                break
            }
            let outcomes: [Result<HTTPResponse, HTTPClientError>]
            if pending.count == 1 {
                do {
                    outcomes = [.success(try await http.send(request(pending[0], bearer)))]
                } catch {
                    results[pending[0]] = PushOutcomeClassifier.transportFailure(error)
                    break
                }
            } else {
                outcomes = await http.sendAll(pending.map { request($0, bearer) }, onAnswer: onAnswer)
                precondition(outcomes.count == pending.count, "the HTTP client answered \(outcomes.count) of \(pending.count) requests")
            }
            var again: [Int] = []
            for (index, outcome) in zip(pending, outcomes) {
                switch outcome {
                case .failure(let error):
                    results[index] = PushOutcomeClassifier.transportFailure(error)
                case .success(let response):
                    switch classify(response) {
                    case .result(let result):
                        results[index] = result
                    case .refreshCredentials(let reason):
                        if refreshed {
                            results[index] = .configurationError(reason: "\(service) refused a freshly refreshed token: \(reason)")
                        } else {
                            again.append(index)
                        }
                    }
                }
            }
            if !again.isEmpty {
                refreshed = true
                await tokens.invalidate(bearer)
            }
            pending = again
        }
        return results.map { $0! }
    }
}
