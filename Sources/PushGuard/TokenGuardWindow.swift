/// The fleet-wide counts the token guard decides on: sends and token refusals of the last window.
public protocol TokenGuardWindow: Sendable {
    /// Adds `sends` sends and `refusals` token refusals (already among the sends) at the current second and
    /// returns the totals of the window, these included.
    func record(sends: Int, refusals: Int) async throws -> TokenGuard.Counts
}
