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
    /// The HTTP status with which the service may call a token expired (its classifier decides); answers with any
    /// other status are final.
    let refreshStatus: Int
    let tokens: any AccessTokenProviding
    let http: any HTTPRequestSending

    /// FCM: a 401 may call the OAuth2 access token expired.
    static func fcm(tokens: any AccessTokenProviding, http: any HTTPRequestSending) -> AuthenticatedSend {
        AuthenticatedSend(service: "FCM", refreshStatus: PushOutcomeClassifier.fcmRefreshStatus, tokens: tokens, http: http)
    }

    /// APNs: a 403 may call the provider token expired.
    static func apns(tokens: any AccessTokenProviding, http: any HTTPRequestSending) -> AuthenticatedSend {
        AuthenticatedSend(service: "APNs", refreshStatus: PushOutcomeClassifier.apnsRefreshStatus, tokens: tokens, http: http)
    }

    func run(request: @escaping (_ bearer: String) -> HTTPRequest, classify: (HTTPResponse) -> PushOutcomeClassifier.Verdict) async -> PushResult {
        await runAll([()], prepare: { .request(request) }, classify: classify)[0]
    }

    /// The requests `prepare` makes of `items`, sent together (one `sendAll` of the HTTP client per round); those
    /// answered with an expired token are sent again, once, with a refreshed one. Results come back in item order.
    /// `onAnswer` is told exactly once per item, with the item's final answer: an answer that sends the item again
    /// is not told, so an item's slot stays taken while its second request is in flight. Answers are classified on
    /// the calling task, never on the HTTP client's thread: an answer whose status may ask for a refresh is told
    /// after its round, every other one as it arrives.
    func runAll<Item>(
        _ items: [Item], onAnswer: PushAnswerHook? = nil, prepare: (Item) -> Prepared, classify: (HTTPResponse) -> PushOutcomeClassifier.Verdict
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
            let heldBack = refreshed ? nil : refreshStatus
            var hook: AnswerHook?
            if let onAnswer {
                hook = { position, outcome in
                    if case .success(let response) = outcome, response.status == heldBack { return }
                    onAnswer(round[position])
                }
            }
            let outcomes = await http.sendAll(round.map { requests[$0]!(bearer) }, onAnswer: hook)
            precondition(outcomes.count == round.count, "the HTTP client answered \(outcomes.count) of \(round.count) requests")
            var again: [Int] = []
            for (index, outcome) in zip(round, outcomes) {
                switch outcome {
                case .failure(let error):
                    results[index] = PushOutcomeClassifier.transportFailure(error)
                case .success(let response):
                    switch classify(response) {
                    case .result(let result):
                        results[index] = result
                        if response.status == heldBack { onAnswer?(index) }
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
