package wire

// Error codes of the protocol (spec §11). Tools may use their own snake_case codes too.
const (
	CodeProtocolInvalidRequest = "tool_protocol_invalid_request"
	CodeDiscoveryDisabled      = "tool_discovery_disabled"
	CodeCallPayloadInvalid     = "tool_call_payload_invalid"
	CodeCallMissingID          = "tool_call_missing_id"
	CodeNotFound               = "tool_not_found"
	CodeExecutionDenied        = "tool_execution_denied"
	CodeUnavailable            = "tool_unavailable"
	CodeArgumentsInvalid       = "tool_arguments_invalid"
	CodeArgumentsSchemaInvalid = "tool_arguments_schema_invalid"
	CodeResultSchemaInvalid    = "tool_result_schema_invalid"
	CodeExecutionFailed        = "tool_execution_failed"
	CodeExecutionException     = "tool_execution_exception"
	CodeBatchPayloadInvalid    = "tool_batch_payload_invalid"
	CodeBatchSizeInvalid       = "tool_batch_size_invalid"
	CodeBatchCallInvalid       = "tool_batch_call_invalid"
	CodePolicyNotGranted       = "tool_policy_not_granted"
	CodeNotExecutable          = "tool_not_executable"
	CodeStaleNodeReference     = "stale_node_reference"
	CodeUIActionNotSupported   = "ui_action_not_supported"
	CodeUIWaitTimeout          = "ui_wait_timeout"
)
