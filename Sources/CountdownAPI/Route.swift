/// The API's routes; `rawValue` is the route's template, used as the `route` metric label.
enum Route: String, Sendable, CaseIterable {
    case deviceToken = "/notifications/device-token"
    case sessions = "/notifications/live-activity-sessions"
    case session = "/notifications/live-activity-sessions/:streamId/:deviceId"
    case cancelStream = "/live-stream/:id/cancel"
    case liveActivityChannel = "/live-stream/:id/live-activity-channel"
    case healthz = "/healthz"
    case readyz = "/readyz"

    /// The label of requests that match no route (one label, so unknown paths cannot grow the metrics).
    static let unmatchedLabel = "unmatched"

    /// The one method each route answers.
    var method: String {
        switch self {
        case .deviceToken, .sessions, .cancelStream: "POST"
        case .session: "DELETE"
        case .healthz, .readyz, .liveActivityChannel: "GET"
        }
    }

    /// Whether the route changes data (and so counts against the write limits).
    var isWrite: Bool { method != "GET" }

    /// The route `path` matches and the values of its `:parameters`, in order; nil when none matches.
    static func match(_ path: String) -> (route: Route, parameters: [String])? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard path.hasPrefix("/"), !segments.contains(where: \.isEmpty) else { return nil }
        for route in allCases {
            let template = route.rawValue.split(separator: "/").map(String.init)
            guard template.count == segments.count else { continue }
            var parameters: [String] = []
            var matched = true
            for (expected, actual) in zip(template, segments) {
                if expected.hasPrefix(":") {
                    parameters.append(String(actual))
                } else if expected != actual {
                    matched = false
                    break
                }
            }
            if matched { return (route, parameters) }
        }
        return nil
    }
}
