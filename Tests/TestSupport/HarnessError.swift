/// A step of the system harness failed (not a finding about the system under test).
public struct HarnessError: Error, CustomStringConvertible {
    public let what: String

    public init(_ what: String) { self.what = what }

    public var description: String { what }
}
