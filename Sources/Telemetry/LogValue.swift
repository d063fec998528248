/// A typed log field value; literals and string interpolations convert implicitly.
public enum LogValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    /// An error's description.
    public static func error(_ error: any Error) -> LogValue { .string(String(describing: error)) }

    /// A duration in seconds.
    public static func seconds(_ duration: Duration) -> LogValue {
        let (seconds, attoseconds) = duration.components
        return .double(Double(seconds) + Double(attoseconds) / 1e18)
    }
}

extension LogValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByStringInterpolation
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(stringInterpolation: DefaultStringInterpolation) { self = .string(String(stringInterpolation: stringInterpolation)) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
