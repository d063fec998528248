// Until TestSupport has `StartKey` (harness API, branch s5-system): delete this file at that merge.
struct StartKey: Hashable, Sendable {
    let stream: String
    let token: String
    var isAndroid: Bool { token.hasPrefix("fcm-") }
}
