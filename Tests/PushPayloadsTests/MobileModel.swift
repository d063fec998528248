/// The app's ActivityKit model exactly as the mobile integration guide defines it; payloads must decode into it.
struct AllmineLiveActivityAttributes: Decodable {
    struct ContentState: Decodable {
        var streamId: String
        var creatorName: String?
        var streamTitle: String?
        var statusText: String?
        var subtitle: String?
        var viewerCount: Int?
        var deepLinkUrl: String?
        var updatedAt: Int?
        var title: String?
        var role: String?
        var deepLink: String?
        var scheduledStartAt: Int?
        var displayState: DisplayState
        var endedReason: EndedReason?
    }

    var streamId: String
    var creatorName: String
    var streamTitle: String
    var title: String?
    var role: String?
    var deepLink: String
}

enum DisplayState: String, Decodable {
    case countdown
    case ended
}

enum EndedReason: String, Decodable {
    case ready
    case started
    case cancelled
    case expired
}

/// The APNs payload decoded with the mobile model, every time field typed as an integer.
struct DecodedPayload: Decodable {
    struct Alert: Decodable {
        var title: String
        var body: String
    }

    struct APS: Decodable {
        var timestamp: Int
        var event: String
        var attributesType: String?
        var attributes: AllmineLiveActivityAttributes?
        var contentState: AllmineLiveActivityAttributes.ContentState
        var staleDate: Int?
        var dismissalDate: Int?
        var inputPushToken: Int?
        var alert: Alert?

        enum CodingKeys: String, CodingKey {
            case timestamp, event, attributes, alert
            case attributesType = "attributes-type"
            case contentState = "content-state"
            case staleDate = "stale-date"
            case dismissalDate = "dismissal-date"
            case inputPushToken = "input-push-token"
        }
    }

    var aps: APS
}
