package io.github.grpcretry.archfixture.clinit;

/**
 * An enum whose constants have bodies: its static initialiser makes its anonymous subclasses, whose initialisation
 * needs the enum's; not a cycle between two threads (no thread can reach a constant's class before the enum's).
 */
public enum Field {
    ONE {
        @Override
        int value() {
            return 1;
        }
    },
    TWO {
        @Override
        int value() {
            return 2;
        }
    };

    abstract int value();
}
