import BlockingIO

/// Which errors mean a dependency was away (the job did not really run) rather than a fault of the job: the
/// clients' own `TransientError` classification (connection loss, deadlock, timeouts).
public enum TransientErrors {
    public static func isTransient(_ error: any Error) -> Bool {
        BlockingIO.isTransient(error)
    }
}
