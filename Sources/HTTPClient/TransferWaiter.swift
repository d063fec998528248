/// Who waits for a transfer: one task, or a batch that resumes its one task when its last transfer finishes.
enum TransferWaiter {
    case single(CheckedContinuation<HTTPResponse, any Error>)
    case batch(TransferBatch, index: Int)
}
