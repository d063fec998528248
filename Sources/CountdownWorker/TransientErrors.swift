import Postgres
import Redis

/// Which errors mean a dependency was away (the job did not really run) rather than a fault of the job.
public enum TransientErrors {
    public static func isTransient(_ error: any Error) -> Bool {
        if let error = error as? PostgresError {
            // A deadlock or serialization race aborted the transaction before anything was decided: run it again.
            return error.isConnectionLoss || error.code == .connectionFailed || error.isSerializationFailure
        }
        if let error = error as? RedisError { return error.breaksConnection }
        return false
    }
}
