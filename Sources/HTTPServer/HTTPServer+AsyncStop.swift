import Foundation

extension HTTPServer {
    /// `stop()` on a thread of its own: its drain waits up to five seconds for suspended requests, which must not
    /// hold one of the few threads of Swift's cooperative pool.
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                self.stop()
                continuation.resume()
            }
        }
    }
}
