import Foundation

/// The start and stop of a long-running server executable configured by the environment (countdown-api,
/// countdown-console): one-line failures on stderr, no arguments but `--help`.
public struct ServerProcess: Sendable {
    public let program: String
    public let usage: String

    public init(program: String, usage: String) {
        self.program = program
        self.usage = usage
    }

    /// Prints each line as `<program>: <line>` on stderr and exits with `code`.
    public func fail(_ lines: String, code: Int32) -> Never {
        for line in lines.split(separator: "\n") {
            FileHandle.standardError.write(Data("\(program): \(line)\n".utf8))
        }
        exit(code)
    }

    /// `--help` / `-h` prints the usage and exits 0; any other argument is a usage error (exit 2).
    public func checkArguments(_ arguments: [String] = CommandLine.arguments) {
        guard arguments.count > 1 else { return }
        if ["-h", "--help"].contains(arguments[1]) {
            print(usage)
            exit(0)
        }
        fail("unexpected argument \"\(arguments[1])\"; \(usage)", code: 2)
    }
}
