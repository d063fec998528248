import Foundation

/// `--name value` options of a benchmark command, with typed lookups and usage errors.
struct BenchOptions {
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    private var values: [String: String] = [:]

    init(_ arguments: [String]) throws {
        var index = 0
        while index < arguments.count {
            let name = arguments[index]
            guard name.hasPrefix("--"), index + 1 < arguments.count else { throw UsageError(description: "expected --name value, got \(name)") }
            values[String(name.dropFirst(2))] = arguments[index + 1]
            index += 2
        }
    }

    func string(_ name: String, default fallback: String? = nil) throws -> String {
        guard let value = values[name] ?? fallback else { throw UsageError(description: "--\(name) is required") }
        return value
    }

    func int(_ name: String, default fallback: Int? = nil) throws -> Int {
        guard let text = values[name] else {
            guard let fallback else { throw UsageError(description: "--\(name) is required") }
            return fallback
        }
        guard let value = Int(text) else { throw UsageError(description: "--\(name) must be an integer (got \(text))") }
        return value
    }
}

/// Prints one machine-readable result line: `RESULT {"key": value, ...}`.
func printResult(_ values: [String: Double]) {
    let body = values.keys.sorted().map { "\"\($0)\": \(values[$0]!)" }.joined(separator: ", ")
    FileHandle.standardOutput.write(Data("RESULT {\(body)}\n".utf8))
}

/// Prints `usage` and the error on stderr; returns the usage error's exit status (2).
func usageError(_ usage: String, _ error: any Error) -> Int32 {
    FileHandle.standardError.write(Data("\(usage)\nerror: \(error)\n".utf8))
    return 2
}
