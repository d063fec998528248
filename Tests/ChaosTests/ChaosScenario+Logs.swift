import Foundation
import TestSupport

extension ChaosScenario {
    /// The JSON log lines whose `msg` is `message`, of the live workers (and the retired ones when asked).
    public func workerLogLines(_ message: String, retired: Bool = false) -> [[String: Any]] {
        (system.workers + (retired ? system.retired : [])).flatMap { $0.logLines() }.filter { $0["msg"] as? String == message }
    }

    /// Epoch seconds of a JSON log line's `ts` (ISO 8601 UTC, with or without fractional seconds); 0 when it has none.
    public static func logTime(_ line: [String: Any]) -> Double {
        guard let text = line["ts"] as? String else { return 0 }
        let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let whole = Date.ISO8601FormatStyle()
        return ((try? withFraction.parse(text)) ?? (try? whole.parse(text)))?.timeIntervalSince1970 ?? 0
    }

    /// A JSON number field as an integer (0 when absent or not a number).
    public static func integer(_ value: Any?) -> Int {
        switch value {
        case let value as Int: value
        case let value as Double: Int(value)
        case let value as NSNumber: value.intValue
        default: 0
        }
    }

    /// `value` with its sign and `digits` decimals (`+1.5`).
    public static func signed(_ value: Double, _ digits: Int) -> String {
        String(format: "%+.\(digits)f", value)
    }

    /// `value` with `digits` decimals.
    public static func fixed(_ value: Double, _ digits: Int) -> String {
        String(format: "%.\(digits)f", value)
    }
}
