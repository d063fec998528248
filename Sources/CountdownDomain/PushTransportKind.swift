/// Which push service carries Live Activity pushes (`PUSH_TRANSPORT`); decides which token a device needs.
public enum PushTransportKind: String, Sendable, CaseIterable {
    case fcm, apns, log
}
