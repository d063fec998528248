import Foundation

/// The version this binary was built as: the text of `Sources/Telemetry/VERSION`, embedded at compile time.
/// The committed file holds the next release with a `-dev` suffix, so a plain `swift build` of a clone reports
/// that; release builds overwrite the file first (the Dockerfile's `VERSION` build argument, or
/// `scripts/set-version`, which defaults to `git describe`).
public enum BuildInfo {
    /// The embedded version, or "unknown" when the file is empty.
    public static let version = normalized(String(decoding: PackageResources.VERSION, as: UTF8.self))

    /// The first non-blank line of a VERSION file, trimmed; "unknown" when there is none.
    public static func normalized(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .first { !$0.isEmpty }
        return line ?? "unknown"
    }

    /// What `--version` prints: the program name and the version.
    public static func versionLine(program: String) -> String { "\(program) \(version)" }

    /// Answers `--version` when it is the first argument: prints `versionLine` and exits 0. Call it first in `main`.
    public static func answerVersionFlag(program: String, arguments: [String] = CommandLine.arguments) {
        guard arguments.dropFirst().first == "--version" else { return }
        print(versionLine(program: program))
        exit(0)
    }
}
