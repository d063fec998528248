import Foundation

/// Holds waiting tasks back for a while on one thread of its own: a wait costs a locked insert, and the thread
/// resumes every wait that has come due (within `slack`) in one pass; `schedule` runs an action on that thread
/// instead of resuming a task.
///
/// For many short waits at once, such as a fixed latency added to every request, this replaces one timer per wait
/// (`Task.sleep`: a timer armed in the dispatch manager thread and a wake-up of its own for each). Waits end in
/// the order of their deadlines, never before them by more than `slack`. `stop()` (or `deinit`) ends every wait at
/// once. A wait does not end when its task is cancelled, and the thread sleeps until a wall-clock time, so a step
/// of the system clock can make a pass late: it is meant for short waits, such as a latency a test server adds.
public final class DelayLine: Sendable {
    private let line: Line

    /// Starts the thread.
    public init(name: String = "delay-line", slack: Duration = .milliseconds(1)) {
        line = Line(slack: slack)
        let line = self.line
        let thread = Thread { line.run() }
        thread.name = name
        thread.stackSize = 1 << 18
        thread.start()
    }

    deinit { line.stop() }

    /// Returns after `duration` (at once once stopped, or for a duration of zero or less).
    public func wait(for duration: Duration) async {
        guard duration > .zero else { return }
        let due = ContinuousClock.now + duration
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            line.add(due: due, .resume(continuation))
        }
    }

    /// Runs `action` on the line's thread after `duration` (at once, on the caller's thread, once stopped or for a
    /// duration of zero or less). Keep it short: every action and wait due after it waits for it.
    public func schedule(after duration: Duration, _ action: @escaping @Sendable () -> Void) {
        guard duration > .zero else { return action() }
        line.add(due: ContinuousClock.now + duration, .action(action))
    }

    /// Ends every wait now and every later one at once; the thread exits.
    public func stop() { line.stop() }

    /// Waits in progress.
    public var waiting: Int { line.count }

    /// What the thread works on; the thread holds only this, so the owner's `deinit` can stop it.
    private final class Line: @unchecked Sendable {
        enum Ending {
            case resume(CheckedContinuation<Void, Never>)
            case action(@Sendable () -> Void)

            func run() {
                switch self {
                case .resume(let continuation): continuation.resume()
                case .action(let action): action()
                }
            }
        }

        private struct Wait {
            let due: ContinuousClock.Instant
            let ending: Ending
        }

        private let condition = NSCondition()
        private let slack: Duration
        private var waits: [Wait] = []  // by deadline; guarded by condition
        private var stopped = false  // guarded by condition

        init(slack: Duration) { self.slack = slack }

        var count: Int {
            condition.lock()
            defer { condition.unlock() }
            return waits.count
        }

        func add(due: ContinuousClock.Instant, _ ending: Ending) {
            condition.lock()
            if stopped {
                condition.unlock()
                ending.run()
                return
            }
            // Deadlines mostly arrive in order (one latency for all): the place is found from the end.
            var index = waits.count
            while index > 0 && waits[index - 1].due > due { index -= 1 }
            waits.insert(Wait(due: due, ending: ending), at: index)
            if index == 0 { condition.signal() }
            condition.unlock()
        }

        func stop() {
            condition.lock()
            stopped = true
            condition.signal()
            condition.unlock()
        }

        func run() {
            condition.lock()
            while true {
                if stopped {
                    let left = waits
                    waits.removeAll()
                    condition.unlock()
                    for wait in left { wait.ending.run() }
                    return
                }
                guard let first = waits.first else {
                    condition.wait()
                    continue
                }
                let now = ContinuousClock.now
                guard first.due <= now + slack else {
                    _ = condition.wait(until: Date(timeIntervalSinceNow: (first.due - now).timeInterval))
                    continue
                }
                let dueCount = waits.firstIndex { $0.due > now + slack } ?? waits.count
                let due = Array(waits[..<dueCount])
                waits.removeFirst(dueCount)
                condition.unlock()
                for wait in due { wait.ending.run() }
                condition.lock()
            }
        }
    }
}
