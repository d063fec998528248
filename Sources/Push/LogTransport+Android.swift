import JSON
import Telemetry

extension LogTransport {
    /// `{"push":"android_data","id":…,"fcm_token":"…<last 8>","android":{…},"data":{…}}`.
    static func androidDataLine(id: String, fcmToken: String, options: AndroidMessageOptions, data: [String: String]) -> String {
        var json = JSONWriter()
        json.raw("{\"push\":\"android_data\"")
        json.member("id", id)
        json.member("fcm_token", Redact.token(fcmToken))
        json.raw(",\"android\":")
        options.write(into: &json)
        json.raw(",\"data\":")
        json.object(data)
        json.raw("}")
        return String(decoding: json.bytes, as: UTF8.self)
    }
}
