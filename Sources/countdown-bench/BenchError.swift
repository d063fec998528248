/// countdown-bench's error: thrown while a benchmark reads its arguments, a usage error (its usage and the error,
/// exit 2); thrown by a run, a failure (exit 1).
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
