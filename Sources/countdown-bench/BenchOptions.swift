import Foundation

/// The options of a benchmark command: `--name value` (a repeated one keeps every value, the last wins a lookup) and
/// bare `--flag`s, with typed lookups and usage errors.
struct BenchOptions {
    private var values: [String: [String]] = [:]
    private var given: Set<String> = []

    /// `flags`: the names that take no value; `known`: every name allowed, nil for any.
    init(_ arguments: [String], flags: Set<String> = [], known: Set<String>? = nil) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name = String(argument.dropFirst(2))
            guard argument.hasPrefix("--"), known?.contains(name) ?? true || flags.contains(name) else {
                throw BenchError(known == nil ? "expected --name value, got \(argument)" : "unknown argument \(argument)")
            }
            if flags.contains(name) {
                given.insert(name)
                index += 1
                continue
            }
            guard index + 1 < arguments.count else {
                throw BenchError(known == nil ? "expected --name value, got \(argument)" : "\(argument) needs a value")
            }
            values[name, default: []].append(arguments[index + 1])
            index += 2
        }
    }

    /// Whether the bare `--flag` was given.
    func has(_ flag: String) -> Bool { given.contains(flag) }

    /// Every value of a repeatable option, in order.
    func all(_ name: String) -> [String] { values[name] ?? [] }

    func string(_ name: String, default fallback: String? = nil) throws -> String {
        guard let value = values[name]?.last ?? fallback else { throw BenchError("--\(name) is required") }
        return value
    }

    /// An integer option, within `range` when one is given.
    func int(_ name: String, default fallback: Int? = nil, in range: ClosedRange<Int>? = nil) throws -> Int {
        guard let text = values[name]?.last else {
            guard let fallback else { throw BenchError("--\(name) is required") }
            return fallback
        }
        guard let value = Int(text) else { throw BenchError("--\(name) must be an integer (got \(text))") }
        if let range, !range.contains(value) {
            throw BenchError("--\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound), got \"\(text)\"")
        }
        return value
    }

    /// A number option; with `positive`, finite and above zero.
    func double(_ name: String, default fallback: Double, positive: Bool = false) throws -> Double {
        guard let text = values[name]?.last else { return fallback }
        guard let value = Double(text), !positive || (value.isFinite && value > 0) else {
            throw BenchError("--\(name) must be a \(positive ? "positive " : "")number (got \(text))")
        }
        return value
    }
}

/// Prints one machine-readable result line: `RESULT {"key": value, ...}`.
func printResult(_ values: [String: Double]) {
    let body = values.keys.sorted().map { "\"\($0)\": \(values[$0]!)" }.joined(separator: ", ")
    FileHandle.standardOutput.write(Data("RESULT {\(body)}\n".utf8))
}
