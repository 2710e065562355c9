package io.github.grpcretry.internal.config;

import io.github.grpcretry.policy.ConfigProblem;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StatusCodesTest {

    @Test
    void namesInAnyCaseAndNumbers() {
        assertThat(StatusCodes.parse("unavailable")).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(StatusCodes.parse("UNAVAILABLE")).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(StatusCodes.parse(" Deadline_Exceeded ")).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(StatusCodes.parse("resource-exhausted")).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(StatusCodes.parse("14")).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(StatusCodes.parse("0")).isEqualTo(Status.Code.OK);
        assertThat(StatusCodes.parse("16")).isEqualTo(Status.Code.UNAUTHENTICATED);
    }

    @Test
    void unknownCodesAreRejected() {
        assertThatThrownBy(() -> StatusCodes.parse("17")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StatusCodes.parse("unavailabel")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("'unavailabel' is not a gRPC status code: use a name in any case (UNAVAILABLE, unavailable)"
                        + " or a number from 0 to 16 (14)");
        assertThatThrownBy(() -> StatusCodes.parse("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StatusCodes.parse("99999999999")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void parseAllReportsEachBadEntryByIndex() {
        List<ConfigProblem> problems = new ArrayList<>();
        assertThat(StatusCodes.parseAll(List.of("aborted", "x", "14", "-1"), "p.codes", problems))
                .containsExactlyInAnyOrder(Status.Code.ABORTED, Status.Code.UNAVAILABLE);
        assertThat(problems).extracting(ConfigProblem::path).containsExactly("p.codes[1]", "p.codes[3]");
        assertThat(problems).extracting(ConfigProblem::value).containsExactly("x", "-1");
    }
}
