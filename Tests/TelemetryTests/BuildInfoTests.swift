import Telemetry
import Testing

@Suite struct BuildInfoTests {
    @Test func theEmbeddedVersionIsOneTrimmedLine() {
        #expect(!BuildInfo.version.isEmpty)
        #expect(BuildInfo.version != "unknown", "Sources/Telemetry/VERSION is committed with a version")
        #expect(!BuildInfo.version.contains { $0.isWhitespace || $0.isNewline })
    }

    @Test(arguments: [("0.2.0\n", "0.2.0"), ("  v1.4.0-3-gabc  \r\n", "v1.4.0-3-gabc"), ("\n\n1.0\nextra\n", "1.0"), ("", "unknown"), (" \n\t\n", "unknown")])
    func normalizedTakesTheFirstNonBlankLine(_ text: String, _ expected: String) {
        #expect(BuildInfo.normalized(text) == expected)
    }

    @Test func theVersionLineNamesTheProgram() {
        #expect(BuildInfo.versionLine(program: "countdown-worker") == "countdown-worker \(BuildInfo.version)")
    }
}
