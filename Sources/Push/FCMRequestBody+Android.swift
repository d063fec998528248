import JSON

extension FCMRequestBody {
    /// `{"message":{"token":…,"android":{"priority":…,"ttl":…[,"collapse_key":…]},"data":{…}}}`: a data message
    /// only (a `notification` block would make FCM post a notification of its own), no `apns` block.
    static func encodeAndroidData(fcmToken: String, options: AndroidMessageOptions, data: [String: String]) -> [UInt8] {
        var json = JSONWriter(capacity: 1024)
        json.raw("{\"message\":{\"token\":")
        json.string(fcmToken)
        json.raw(",\"android\":")
        options.write(into: &json)
        json.raw(",\"data\":")
        json.object(data)
        json.raw("}}")
        return json.bytes
    }
}
