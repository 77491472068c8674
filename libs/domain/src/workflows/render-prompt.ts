const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/**
 * A step's message to its agent (spec §Resources WorkflowDefinition `prompt_template`, D8):
 * `{{input}}` is the step's input, `{{name}}` a variable (`variables` of workflow.json, or an
 * earlier step's `output_var`). A placeholder nothing sets stays as written, so a typo shows in
 * the agent's input instead of vanishing (install warns about it: undefined-variable).
 */
export function renderPrompt(template: string, input: string, variables: Readonly<Record<string, string>>): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => {
    if (name === 'input') return input;
    return Object.hasOwn(variables, name) ? (variables[name] as string) : whole;
  });
}
