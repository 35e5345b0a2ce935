"""The Jinja2 template of the rollout viewer page (kept in Python so the page needs no package data files)."""

from __future__ import annotations

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }} · hermes-envs rollouts</title>
<style>
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d2330; }
  header { background: #1d2330; color: #fff; padding: 14px 24px; }
  header h1 { margin: 0 0 4px; font-size: 18px; }
  main { padding: 16px 24px; max-width: 1100px; }
  .legend span { padding: 1px 6px; border-radius: 3px; margin-right: 6px; color: #1d2330; }
  .summary { color: #c9d1e0; }
  .findings { background: #fff7e6; border: 1px solid #f0c36d; border-radius: 6px; padding: 8px 16px; }
  .findings li.error, .finding.error { color: #a3141a; }
  .findings li.warning, .finding.warning { color: #8a5300; }
  .group { margin: 18px 0; }
  .group > h2 { font-size: 16px; margin: 0 0 6px; }
  .rollout { background: #fff; border: 1px solid #d8dde6; border-radius: 6px; margin: 10px 0; padding: 10px 14px; }
  .rollout:target { outline: 3px solid #3b7be0; }
  .rollout h3 { margin: 0 0 8px; font-size: 15px; display: flex; gap: 10px; align-items: center; }
  .reward { color: #fff; border-radius: 4px; padding: 1px 8px; font-weight: 600; }
  .meta { color: #5b6578; font-weight: normal; font-size: 13px; }
  .msg { border-left: 4px solid #9aa5b8; padding: 4px 10px; margin: 6px 0; }
  .msg .role { font-weight: 600; font-size: 12px; text-transform: uppercase; color: #5b6578; }
  .msg .role .call-id { text-transform: none; font-family: monospace; }
  .tool-call .arg-name { font-size: 12px; color: #5b6578; margin-top: 4px; }
  .role-system { border-color: #9aa5b8; } .role-user { border-color: #3b7be0; }
  .role-assistant { border-color: #2e9d5b; } .role-tool { border-color: #b07a16; background: #fdfaf3; }
  pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0; font: 13px/1.4 ui-monospace, monospace; }
  .tool-call { background: #eef6f0; border-radius: 4px; padding: 4px 8px; margin: 4px 0; }
  .tool-call .name { font-family: ui-monospace, monospace; font-weight: 600; }
  .reasoning { background: #f3f0fa; border-radius: 4px; padding: 2px 8px; margin: 4px 0; }
  .exit { font-size: 12px; color: #5b6578; }
  .exit.bad { color: #a3141a; }
  .tokens pre { line-height: 1.7; }
  .trained { background: #c9f0d6; }
  .masked { background: #e6e8ec; color: #5b6578; }
  a { color: #2458b3; }
</style>
</head>
<body>
<header>
  <h1>{{ title }}</h1>
  <div class="summary" id="summary">{{ summary.groups }} group(s), {{ summary.rollouts }} rollout(s), mean reward
    {{ summary.mean }}, {{ summary.tokens }} tokens ({{ summary.trained }} trained)</div>
  <div class="legend">tokens: <span class="trained">trained</span><span class="masked">masked (-100)</span></div>
</header>
<main>
{% if findings %}
<section class="findings" id="findings">
  <h2>Findings ({{ findings | length }})</h2>
  <ul>
  {% for f in findings %}
    <li class="{{ f.severity }}"><a href="#{{ f.anchor }}">group {{ f.group }}{% if f.rollout is not none %},
      rollout {{ f.rollout }}{% endif %}</a>: {{ f.severity }}: {{ f.message }}</li>
  {% endfor %}
  </ul>
</section>
{% else %}
<p class="findings-none" id="findings">No findings: tokens and masks line up, every rollout has a finite score, every
  tool call has its result.</p>
{% endif %}
{% for g in groups %}
<section class="group" id="{{ g.anchor }}">
  <h2>Group {{ g.index }} <span class="meta">scores {{ g.scores }}</span></h2>
  {% for f in g.findings %}<div class="finding {{ f.severity }}">{{ f.severity }}: {{ f.message }}</div>{% endfor %}
  {% for r in g.rollouts %}
  <article class="rollout" id="{{ r.anchor }}" data-reward="{{ r.score }}">
    <h3>Rollout {{ r.index }} <span class="reward" style="background: {{ r.colour }}">reward {{ r.score }}</span>
      <span class="meta">{{ r.messages | length }} messages, {{ r.tokens }} tokens ({{ r.trained }} trained)</span></h3>
    {% for f in r.findings %}<div class="finding {{ f.severity }}">{{ f.severity }}: {{ f.message }}</div>{% endfor %}
    {% for m in r.messages %}
    <div class="msg role-{{ m.role }}">
      <div class="role">{{ m.role }}{% if m.tool_call_id %} · result of <span class="call-id">{{ m.tool_call_id
        }}</span>{% endif %}</div>
      {% if m.reasoning %}<details class="reasoning" open><summary>reasoning</summary><pre>{{ m.reasoning }}</pre>
      </details>{% endif %}
      {% if m.result %}
        {% if m.result.exit_code is not none %}<div class="exit{% if m.result.exit_code != 0 %} bad{% endif %}">exit
          code {{ m.result.exit_code }}{% if m.result.error %} · error: {{ m.result.error }}{% endif %}</div>{% endif %}
        <pre class="tool-output">{{ m.result.output }}</pre>
      {% elif m.content %}<pre class="content">{{ m.content }}</pre>{% endif %}
      {% for c in m.tool_calls %}
      <div class="tool-call">calls <span class="name">{{ c.name }}</span> <span class="meta">{{ c.id }}</span>
        <pre>{{ c.arguments }}</pre>
        {% for b in c.blocks %}<div class="arg-name">{{ b.name }}</div><pre class="arg-text">{{ b.text }}</pre>
        {% endfor %}</div>
      {% endfor %}
    </div>
    {% endfor %}
    {% if r.spans %}
    <details class="tokens" open><summary>tokens: {{ r.tokens }} ({{ r.trained }} trained)</summary>
      <pre>{% for s in r.spans %}<span class="{{ 'trained' if s.trained else 'masked' }}"
        title="{{ s.count }} {{ 'trained' if s.trained else 'masked' }} token(s)">{{ s.text }}</span>{% endfor %}</pre>
    </details>
    {% endif %}
  </article>
  {% endfor %}
</section>
{% endfor %}
</main>
</body>
</html>
"""
