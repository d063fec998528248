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
        var refreshed = false
        while true {
            let bearer: String
            do {
                bearer = try await tokens.accessToken()
            } catch {
                return PushOutcomeClassifier.credentialsFailure(error)
            }
            let response: HTTPResponse
            do {
                response = try await http.send(request(bearer))
            } catch {
                return PushOutcomeClassifier.transportFailure(error)
            }
            switch classify(response) {
            case .result(let result):
                return result
            case .refreshCredentials(let reason):
                if refreshed { return .configurationError(reason: "\(service) refused a freshly refreshed token: \(reason)") }
                refreshed = true
                await tokens.invalidate(bearer)
            }
        }
    }
}
