import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Telemetry

@Suite struct LoggerTests {
    let sink = CapturingLogSink()
    static let fixedTime = Date(timeIntervalSince1970: 1_776_384_000.123)

    private func logger(_ level: LogLevel = .debug, _ format: LogFormat = .json) -> Logger {
        Logger(level: level, format: format, sink: sink, clock: { Self.fixedTime })
    }

    private func parsedLines() throws -> [[String: Any]] {
        try sink.lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }

    @Test func jsonLinesParseBackWithTypedFields() throws {
        logger().with(["component": "relay"]).info("outbox drained", [
            "rows": 42, "lag_seconds": 0.25, "caught_up": true, "stream": "65f0\"x\\y\nz", "emoji": "🇹🇷 ş",
        ])
        let line = try #require(sink.lines.first)
        #expect(sink.lines.count == 1)
        #expect(!line.contains("\n"))
        #expect(line.hasPrefix(#"{"ts":"2026-04-17T00:00:00.123Z","level":"info","msg":"outbox drained","component":"relay","#))
        let object = try #require(try parsedLines().first)
        #expect(object["rows"] as? Int == 42)
        #expect(object["lag_seconds"] as? Double == 0.25)
        #expect(object["caught_up"] as? Bool == true)
        #expect(object["stream"] as? String == "65f0\"x\\y\nz")
        #expect(object["emoji"] as? String == "🇹🇷 ş")
        #expect(line.contains(#""caught_up":true"#), "booleans are JSON booleans")
    }

    @Test func fieldsAfterTheFixedOnesAreSortedByKey() throws {
        logger().warn("m", ["b": 1, "a": 2, "c": 3])
        #expect(sink.lines == [#"{"ts":"2026-04-17T00:00:00.123Z","level":"warn","msg":"m","a":2,"b":1,"c":3}"#])
    }

    @Test func reservedKeysDoNotClobberTheRecord() throws {
        logger().info("real", ["msg": "fake", "level": "x", "ts": 1])
        let object = try #require(try parsedLines().first)
        #expect(object["msg"] as? String == "real")
        #expect(object["level"] as? String == "info")
        #expect(object["_msg"] as? String == "fake")
        #expect(object["_ts"] as? Int == 1)
    }

    @Test func controlCharactersAndNonFiniteNumbersStayValidJSON() throws {
        logger().error("bell\u{7}\u{1F}", ["nan": .double(.nan), "inf": .double(.infinity), "tab": "a\tb\r"])
        let object = try #require(try parsedLines().first)
        #expect(object["msg"] as? String == "bell\u{7}\u{1F}")
        #expect(object["nan"] as? String == "nan")
        #expect(object["inf"] as? String == "inf")
        #expect(object["tab"] as? String == "a\tb\r")
    }

    @Test func levelFiltering() throws {
        let evaluated = Atomic<Int>(0)
        func expensive() -> String { evaluated.add(1, ordering: .relaxed); return "x" }
        let warn = logger(.warn)
        warn.debug(expensive())
        warn.info(expensive(), ["k": .string(expensive())])
        warn.warn("w")
        warn.error("e")
        #expect(try parsedLines().map { $0["level"] as? String } == ["warn", "error"])
        #expect(evaluated.load(ordering: .relaxed) == 0, "filtered records build nothing")
        #expect(!warn.isEnabled(.info) && warn.isEnabled(.error))
        sink.clear()
        let debug = logger(.debug)
        for level in LogLevel.allCases { debug.log(level, "m") }
        #expect(sink.lines.count == 4)
    }

    @Test func childLoggersMergeAndOverrideFields() throws {
        let base = logger().with(["component": "worker", "worker": "w1"])
        let child = base.with(["component": "relay", "batch": 3])
        child.info("a", ["batch": 4])
        base.info("b")
        let objects = try parsedLines()
        #expect(objects[0]["component"] as? String == "relay")
        #expect(objects[0]["worker"] as? String == "w1")
        #expect(objects[0]["batch"] as? Int == 4)
        #expect(objects[1]["component"] as? String == "worker")
        #expect(objects[1]["batch"] == nil)
    }

    @Test func secretKeysAreRedacted() throws {
        logger().with(["db_password": "hunter2"]).info("config", [
            "password": "p", "client_secret": "s", "private_key": "-----BEGIN", "privateKey": "k", "Authorization": "Bearer abc",
            "api-key": "k", "password_set": true,
        ])
        let object = try #require(try parsedLines().first)
        for key in ["db_password", "password", "client_secret", "private_key", "privateKey", "Authorization", "api-key", "password_set"] {
            #expect(object[key] as? String == "[REDACTED]", "\(key)")
        }
        #expect(!sink.lines[0].contains("hunter2") && !sink.lines[0].contains("BEGIN") && !sink.lines[0].contains("abc"))
    }

    @Test func tokenKeysShowOnlyTheirLastEightCharacters() throws {
        let token = "f" + String(repeating: "0", count: 50) + "9f3a01bc"
        logger().info("sent", [
            "push_to_start_token": .string(token), "fcmToken": .string(Redact.token(token)), "token_count": 3, "token": "short",
        ])
        let object = try #require(try parsedLines().first)
        #expect(object["push_to_start_token"] as? String == "…9f3a01bc")
        #expect(object["fcmToken"] as? String == "…9f3a01bc", "already redacted values are kept")
        #expect(object["token_count"] as? Int == 3, "numbers under token keys are not secrets")
        #expect(object["token"] as? String == "…")
    }

    @Test func redactToken() {
        #expect(Redact.token("abcdefghijklmnopqrstuvwxyz") == "…stuvwxyz")
        #expect(Redact.token("0123456789abcdefg") == "…9abcdefg", "longer than 16: the last 8")
        #expect(Redact.token("0123456789abcdef") == "…", "16 or fewer: nothing shown")
        #expect(Redact.token("0123456789abcde") == "…")
        #expect(Redact.token("short-token") == "…", "the push logs mask as the console does")
        #expect(Redact.token("") == "…")
        #expect(Redact.isSecretKey("X-Private.Key") && Redact.isSecretKey("PASSWD") && !Redact.isSecretKey("stream_id"))
    }

    @Test func textFormat() {
        logger(.debug, .text).with(["component": "relay"]).warn("slow\nbatch", [
            "rows": 3, "stream": "a b", "id": "65f0", "quote": "say \"hi\"", "empty": "", "ok": false,
        ])
        #expect(sink.lines == [
            #"2026-04-17T00:00:00.123Z warn  [relay] slow\nbatch empty="" id=65f0 ok=false quote="say \"hi\"" rows=3 stream="a b""#,
        ])
        sink.clear()
        logger(.debug, .text).info("plain")
        #expect(sink.lines == ["2026-04-17T00:00:00.123Z info  plain"])
    }

    @Test(arguments: [
        (1_776_384_000.123, "2026-04-17T00:00:00.123Z"), (0, "1970-01-01T00:00:00.000Z"),
        (1_709_209_496.789, "2024-02-29T12:24:56.789Z"), (-0.001, "1969-12-31T23:59:59.999Z"),
        (951_782_400, "2000-02-29T00:00:00.000Z"), (4_102_444_799.9999, "2099-12-31T23:59:59.999Z"),
    ])
    func rfc3339(seconds: Double, expected: String) {
        #expect(RFC3339.milliseconds(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test func concurrentWritersProduceWholeLines() async {
        let log = logger().with(["component": "load"])
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask { for index in 0..<200 { log.info("line", ["task": .int(task), "index": .int(index)]) } }
            }
        }
        #expect(sink.lines.count == 1600)
        #expect(sink.lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
    }
}
