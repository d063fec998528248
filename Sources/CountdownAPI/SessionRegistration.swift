/// A validated `POST /notifications/live-activity-sessions` body: the runtime token of a started Live Activity.
public struct SessionRegistration: Sendable, Equatable {
    public var streamID: String
    public var deviceID: String
    /// ActivityKit's runtime push token as lowercase hex.
    public var liveActivityToken: String
    public var activityID: String?

    public init(streamID: String, deviceID: String, liveActivityToken: String, activityID: String? = nil) {
        self.streamID = streamID
        self.deviceID = deviceID
        self.liveActivityToken = liveActivityToken
        self.activityID = activityID
    }

    /// Reads and checks the body: types first (400), then the rules (422).
    init(body: JSONBody) throws(APIError) {
        let streamID = try body.string("streamId")
        let deviceID = try body.string("deviceId")
        let token = try body.string("liveActivityToken")
        let activityID = try body.string("activityId")
        self.streamID = try FieldRules.identifier(try JSONBody.require(streamID, "streamId"), field: "streamId")
        self.deviceID = try FieldRules.identifier(try JSONBody.require(deviceID, "deviceId"), field: "deviceId")
        liveActivityToken = try FieldRules.hexToken(try JSONBody.require(token, "liveActivityToken"), field: "liveActivityToken")
        self.activityID = try activityID.map { (value) throws(APIError) in try FieldRules.identifier(value, field: "activityId") }
    }
}
