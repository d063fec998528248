import Configuration
import Telemetry
import Testing

/// `LOG_LEVEL` and `LOG_FORMAT`, read as every process reads them.
@Suite struct EnvironmentLoggerTests {
    @Test func defaultsAndAcceptedValues() throws {
        let defaults = Environment([:])
        #expect(try defaults.logLevel() == .info && defaults.logFormat() == .json)
        let set = Environment(["LOG_LEVEL": "WARNING", "LOG_FORMAT": "Text"])
        #expect(try set.logLevel() == .warn && set.logFormat() == .text)
        let empty = Environment(["LOG_LEVEL": "", "LOG_FORMAT": " "])
        #expect(try empty.logLevel() == .info && empty.logFormat() == .json)
        for level in LogLevel.allCases {
            #expect(try Environment(["LOG_LEVEL": level.name]).logLevel() == level)
        }
    }

    @Test func aBadValueNamesItsVariable() {
        #expect(throws: ConfigError(.invalid, variable: "LOG_LEVEL", problem: #""verbose" is invalid: expected debug, info, warn or error"#)) {
            try Environment(["LOG_LEVEL": "verbose"]).logLevel()
        }
        do {
            _ = try Environment(["LOG_FORMAT": "xml"]).logFormat()
            Issue.record("accepted LOG_FORMAT=xml")
        } catch let error as ConfigError {
            #expect(error.variable == "LOG_FORMAT")
            #expect(error.description == #"LOG_FORMAT: must be one of json, text, got "xml""#)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
