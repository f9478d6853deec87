// The user's flexeval-style config (seeds/flexeval_query_routed_metric.md), run with
// `routeval route --config examples/data/dsl/toytask.jsonnet --data examples/data/dsl/outputs.jsonl`.
local qa = { task: 'qa' };
{
  class_path: 'ChatResponse',
  init_args: {
    eval_dataset: {
      class_path: 'JsonlChatDataset',
      init_args: {
        path: 'toydata.jsonl',
        input_template: '{{ prompt }}',
        reference_template: '{{ answer }}',
        extra_info_templates: { first_word: '{{ prompt.split(" ")[0] }}' },
      },
    },
    metrics: [
      {
        class_path: 'QueryRoutedMetric',
        init_args: {
          routes: [
            { name: 'qa', where: qa, metrics: [{ class_path: 'ExactMatch' }], group_by: 'lang' },
            { name: 'open', where: { task: 'open' }, metrics: [{ class_path: 'OutputLengthStats' }] },
            { name: 'capital_q', where: { first_word: { regex: '^(Capital|What)' } }, metrics: [{ class_path: 'CharF1' }] },
          ],
        },
      },
    ],
  },
}
