import BlockingIO
import HTTPClient

/// The send loop FCM and APNs share: get a bearer token, send, classify; when the service calls the token expired,
/// drop it and try exactly once more, and treat a second refusal as a configuration error (never spin).
struct AuthenticatedSend {
    /// What a transport makes of one item: its request (given the bearer token), or its answer without a request.
    enum Prepared {
        case request((_ bearer: String) -> HTTPRequest)
        case answered(PushResult)
    }

    let service: String
    let tokens: any AccessTokenProviding
    let http: any HTTPRequestSending

    func run(
        request: @escaping (_ bearer: String) -> HTTPRequest, classify: @escaping @Sendable (HTTPResponse) -> PushOutcomeClassifier.Verdict
    ) async -> PushResult {
        await runAll([()], prepare: { .request(request) }, classify: classify)[0]
    }

    /// The requests `prepare` makes of `items`, sent together (one `sendAll` of the HTTP client per round); those
    /// answered with an expired token are sent again, once, with a refreshed one. Results come back in item order.
    /// `onAnswer` is told exactly once per item, with the item's final answer: an answer that sends the item again
    /// is not told, so an item's slot stays taken while its second request is in flight.
    func runAll<Item>(
        _ items: [Item], onAnswer: PushAnswerHook? = nil, prepare: (Item) -> Prepared,
        classify: @escaping @Sendable (HTTPResponse) -> PushOutcomeClassifier.Verdict
    ) async -> [PushResult] {
        var results = [PushResult?](repeating: nil, count: items.count)
        var requests = [((String) -> HTTPRequest)?](repeating: nil, count: items.count)
        var pending: [Int] = []
        for (index, item) in items.enumerated() {
            switch prepare(item) {
            case .request(let request):
                requests[index] = request
                pending.append(index)
            case .answered(let result):
                results[index] = result
                onAnswer?(index)
            }
        }
        var refreshed = false
        while !pending.isEmpty {
            let bearer: String
            do {
                bearer = try await tokens.accessToken()
            } catch {
                for index in pending {
                    results[index] = PushOutcomeClassifier.credentialsFailure(error)
                    onAnswer?(index)
                }
                break
            }
            let round = pending
            let verdicts = Locked([PushOutcomeClassifier.Verdict?](repeating: nil, count: round.count))
            var hook: AnswerHook?
            if let onAnswer {
                let lastRound = refreshed
                hook = { position, outcome in
                    if case .success(let response) = outcome {
                        let verdict = classify(response)
                        verdicts.withLock { $0[position] = verdict }
                        if case .refreshCredentials = verdict, !lastRound { return }
                    }
                    onAnswer(round[position])
                }
            }
            let outcomes = await http.sendAll(round.map { requests[$0]!(bearer) }, onAnswer: hook)
            precondition(outcomes.count == round.count, "the HTTP client answered \(outcomes.count) of \(round.count) requests")
            let told = verdicts.value
            var again: [Int] = []
            for (position, (index, outcome)) in zip(round, outcomes).enumerated() {
                switch outcome {
                case .failure(let error):
                    results[index] = PushOutcomeClassifier.transportFailure(error)
                case .success(let response):
                    switch told[position] ?? classify(response) {
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
