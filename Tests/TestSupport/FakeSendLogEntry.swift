import Foundation

/// A send the fake FCM answered, from its debug log (`SystemOptions.fakeDebug`).
public struct FakeSendLogEntry: Sendable, Equatable {
    /// When the fake answered, epoch seconds.
    public let at: Double
    /// The token's last 8 characters (what the fake logs).
    public let token: String
    /// 200 when accepted, else the status a fault answered with.
    public let status: Int

    public init(at: Double, token: String, status: Int) {
        self.at = at
        self.token = token
        self.status = status
    }

    /// The entry a log line is, or nil for lines about anything else ("message accepted": 200; "send failed by
    /// fault": its status).
    public static func parse(_ line: Substring) -> FakeSendLogEntry? {
        guard let entry = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
              let stamp = entry["ts"] as? String,
              let at = (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(stamp))
                ?? (try? Date.ISO8601FormatStyle().parse(stamp))
        else { return nil }
        let status: Int
        switch entry["msg"] as? String {
        case "message accepted": status = 200
        case "send failed by fault": status = (entry["status"] as? String).flatMap(Int.init) ?? (entry["status"] as? Int) ?? 0
        default: return nil
        }
        let token = (entry["token"] as? String ?? "").drop { $0 == "…" }
        return FakeSendLogEntry(at: at.timeIntervalSince1970, token: String(token), status: status)
    }
}

extension CountdownSystem {
    /// Every send the fake answered so far, oldest first; needs `SystemOptions.fakeDebug` (else it is empty).
    public func fakeRequestLog() -> [FakeSendLogEntry] {
        fake.stderr.split(separator: "\n").compactMap(FakeSendLogEntry.parse)
    }
}
