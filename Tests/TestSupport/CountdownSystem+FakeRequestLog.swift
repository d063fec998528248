import Foundation

/// One send the fake FCM answered, as its debug log shows it (`SystemOptions.fakeDebug`).
public struct FakeSend: Sendable, Equatable {
    /// When the fake answered (epoch seconds, millisecond precision).
    public let at: Double
    /// The last 8 characters of the FCM token (all the fake logs of a token).
    public let token: String
    /// 200 for an accepted message, else the status a fault answered with.
    public let status: Int

    public init(at: Double, token: String, status: Int) {
        self.at = at
        self.token = token
        self.status = status
    }

    /// The send a log line records, or nil for any other line: `message accepted` (200) or `send failed by fault`
    /// (its `status`).
    public static func parse(logLine line: Substring) -> FakeSend? {
        guard let data = line.data(using: .utf8),
              let entry = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let message = entry["msg"] as? String else { return nil }
        let status: Int
        switch message {
        case "message accepted": status = 200
        case "send failed by fault": status = Int(entry["status"] as? String ?? "") ?? 0
        default: return nil
        }
        guard let stamp = entry["ts"] as? String, let at = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(stamp) else {
            return nil
        }
        let token = (entry["token"] as? String ?? "").drop { $0 == "…" }
        return FakeSend(at: at.timeIntervalSince1970, token: String(token), status: status)
    }
}

extension CountdownSystem {
    /// Every send the fake answered so far, oldest first, read from its debug log (the system must run with
    /// `fakeDebug`). Unlike `GET /fake/requests` this is not capped to the newest requests.
    public func fakeRequestLog() throws -> [FakeSend] {
        let text = try String(contentsOfFile: fake.stderrPath, encoding: .utf8)
        return text.split(separator: "\n").compactMap(FakeSend.parse(logLine:))
    }

    /// Every message the fake accepted, whole, as JSON objects read from its record file (`fakeRecordPath`),
    /// independent of any `PushTally`.
    public func fakeRecords() throws -> [[String: Any]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: fakeRecordPath))
        return data.split(separator: UInt8(ascii: "\n")).compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any]
        }
    }
}
