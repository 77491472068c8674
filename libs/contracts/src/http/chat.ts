import { Type, type Static } from 'typebox';

/**
 * POST /chat/completions: the OpenAI chat-completions request and response, addressed to an
 * agent (spec §Endpoints: "an OpenAI-style compatible route", payload not shown; ours is in
 * docs/invocation.md). Unknown request fields (temperature, tools, ...) are accepted and ignored,
 * as OpenAI clients send many of them.
 */

export const ChatMessageIn = Type.Object(
  {
    role: Type.String({ description: 'system, user, assistant, tool or developer.' }),
    content: Type.Union([Type.String(), Type.Null(), Type.Array(Type.Unknown())], {
      description: 'Text, or an array of content parts of which the `text` parts are read.',
    }),
  },
  { additionalProperties: true },
);
export type ChatMessageIn = Static<typeof ChatMessageIn>;

export const ChatCompletionRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, description: 'The agent: its name or its id.' }),
    messages: Type.Array(ChatMessageIn, { minItems: 1, description: 'The last user message is the input.' }),
    stream: Type.Optional(Type.Boolean({ description: 'true: server-sent `chat.completion.chunk` events, then `[DONE]`.' })),
  },
  { additionalProperties: true },
);
export type ChatCompletionRequest = Static<typeof ChatCompletionRequest>;

export const ChatCompletionUsage = Type.Object({
  prompt_tokens: Type.Integer({ minimum: 0 }),
  completion_tokens: Type.Integer({ minimum: 0 }),
  total_tokens: Type.Integer({ minimum: 0 }),
});
export type ChatCompletionUsage = Static<typeof ChatCompletionUsage>;

export const ChatCompletion = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion'),
  created: Type.Integer({ description: 'Seconds since the epoch.' }),
  model: Type.String(),
  choices: Type.Array(
    Type.Object({
      index: Type.Integer(),
      message: Type.Object({ role: Type.Literal('assistant'), content: Type.String() }),
      finish_reason: Type.String(),
    }),
  ),
  usage: ChatCompletionUsage,
});
export type ChatCompletion = Static<typeof ChatCompletion>;

/** One agent in GET /v1/models: OpenAI's model object, the agent's name as its id. */
export const OpenAiModel = Type.Object({
  id: Type.String({ description: 'The agent\'s name: what `model` of a chat completion takes.' }),
  object: Type.Literal('model'),
  created: Type.Integer({ description: 'When the agent was installed, seconds since the epoch.' }),
  owned_by: Type.String({ description: 'Always `agent-platform`.' }),
});
export type OpenAiModel = Static<typeof OpenAiModel>;

/** GET /v1/models: OpenAI's list shape, so that `client.models.list()` finds the agents. */
export const OpenAiModelList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(OpenAiModel),
});
export type OpenAiModelList = Static<typeof OpenAiModelList>;
