import JSON
import Telemetry

extension LogTransport {
    /// `{"push":"android_data","id":…,"fcm_token":"…<last 8>","android":{…},"data":{…}}`.
    static func androidDataLine(id: String, fcmToken: String, options: AndroidMessageOptions, data: [String: String]) -> String {
        var json = JSONWriter()
        json.object { line in
            line.member("push", "android_data")
            line.member("id", id)
            line.member("fcm_token", Redact.token(fcmToken))
            line.key("android")
            options.write(into: &line)
            line.key("data")
            line.object(data)
        }
        return String(decoding: json.bytes, as: UTF8.self)
    }
}
