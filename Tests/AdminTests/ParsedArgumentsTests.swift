import Foundation
import Testing
@testable import CountdownAdmin
import CountdownCommands
import CountdownDomain
import CountdownStore
@testable import CountdownMaintenance

@Suite struct ParsedArgumentsTests {
    @Test func splitsPositionalsAndFlags() throws {
        let parsed = try ParsedArguments(["s1", "--json", "--limit=5", "--yes"], booleanFlags: ["json", "yes"], valueFlags: ["limit"])
        #expect(parsed.positionals == ["s1"])
        #expect(parsed.has("json") && parsed.has("yes"))
        #expect(parsed.flags["limit"] == "5")
        let spaced = try ParsedArguments(["--limit", "7", "x"], booleanFlags: [], valueFlags: ["limit"])
        #expect(spaced.flags["limit"] == "7" && spaced.positionals == ["x"])
    }

    @Test func rejectsUnknownAndMalformedFlags() {
        #expect(throws: UsageError("unknown option --force")) { try ParsedArguments(["--force"], booleanFlags: ["json"]) }
        #expect(throws: UsageError("--json takes no value")) { try ParsedArguments(["--json=1"], booleanFlags: ["json"]) }
        #expect(throws: UsageError("--limit needs a value")) { try ParsedArguments(["--limit"], booleanFlags: [], valueFlags: ["limit"]) }
    }

    @Test func aRepeatedFlagIsTakenOutWithEveryValue() {
        let (values, rest) = ParsedArguments.extract("kind", from: ["--kind", "start", "--json", "--kind=end", "s1", "--kinds", "x", "--kind"])
        #expect(values == ["start", "end"])
        #expect(rest == ["--json", "s1", "--kinds", "x", "--kind"], "a last --kind without a value stays for the caller to refuse")
        #expect(ParsedArguments.extract("actor", from: ["--actor", "--yes"]) == (["--yes"], []))
    }

    @Test func positionalCountsAreChecked() throws {
        let parsed = try ParsedArguments(["a", "b"], booleanFlags: [])
        #expect(throws: UsageError("unexpected argument \"b\"")) { try parsed.expectPositionals(["streamId"]) }
        #expect(throws: UsageError("missing <time>")) { try parsed.expectPositionals(["streamId", "status", "time"]) }
    }

    @Test func identifiersAndTimesAreValidated() throws {
        #expect(throws: UsageError.self) { try IdentifierRule.validate("", what: "stream id") }
        #expect(throws: UsageError.self) { try IdentifierRule.validate("a\u{7}b", what: "stream id") }
        try IdentifierRule.validate("stream-42", what: "stream id")
        let date = try TimeArgument.parse("2026-12-01T20:00:00+03:00")
        #expect(date == Date(timeIntervalSince1970: 1_796_144_400))
        #expect(try TimeArgument.parse("2026-12-01T17:00:00.250Z").timeIntervalSince1970 == 1_796_144_400.25)
        #expect(throws: UsageError.self) { try TimeArgument.parse("2026-12-01 20:00") }
        #expect(throws: UsageError.self) { try TimeArgument.parse("2026-12-01T20:00:00") }
    }

    @Test func timesOutsideTheCalendarAreRefusedNotRolledOver() throws {
        for (text, field) in [("2027-02-30T20:00:00Z", "day"), ("2027-02-29T20:00:00+03:00", "day"), ("2026-04-31T00:00:00Z", "day"),
                              ("2026-13-01T00:00:00Z", "month"), ("2026-00-10T00:00:00Z", "month"), ("2026-12-00T00:00:00Z", "day"),
                              ("2026-12-01T24:00:00Z", "hour"), ("2026-12-01T20:60:00Z", "minute"), ("2026-12-01T20:00:60Z", "second"),
                              ("2026-12-01T20:00:00+24:00", "zone offset"), ("2026-12-01T20:00:00.5-03:60", "zone offset")] {
            #expect(throws: UsageError("\"\(text)\" is not a real time: its \(field) is out of range"), "\(text)") { try TimeArgument.parse(text) }
        }
        #expect(try TimeArgument.parse("2028-02-29T12:00:00Z") == Date(timeIntervalSince1970: 1_835_438_400), "a leap day")
        #expect(try TimeArgument.parse("2026-12-31T23:59:59.5-12:00").timeIntervalSince1970 == 1_798_804_799.5)
    }
}
