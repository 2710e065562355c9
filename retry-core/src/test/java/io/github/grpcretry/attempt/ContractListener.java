package io.github.grpcretry.attempt;

import io.grpc.ClientCall;

/**
 * The call-contract checker of the engine tests; the checks live in
 * {@link io.github.grpcretry.testing.ContractListener} (shared with the reliability suite).
 */
final class ContractListener<T> extends io.github.grpcretry.testing.ContractListener<T> {

    ContractListener() {
        super();
    }

    /** Checks the contract and passes every callback on to {@code delegate}. */
    ContractListener(ClientCall.Listener<T> delegate) {
        super(delegate);
    }
}
