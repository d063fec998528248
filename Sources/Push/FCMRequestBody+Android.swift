import JSON

extension FCMRequestBody {
    /// `{"message":{"token":…,"android":{"priority":…,"ttl":…[,"collapse_key":…]},"data":{…}}}`: a data message
    /// only (a `notification` block would make FCM post a notification of its own), no `apns` block.
    static func encodeAndroidData(fcmToken: String, options: AndroidMessageOptions, data: [String: String]) -> [UInt8] {
        var json = JSONWriter(capacity: 1024)
        json.object { root in
            root.key("message")
            root.object { message in
                message.member("token", fcmToken)
                message.key("android")
                options.write(into: &message)
                message.key("data")
                message.object(data)
            }
        }
        return json.bytes
    }
}
