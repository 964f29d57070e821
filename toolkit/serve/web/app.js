// csan-serve's page: fills the model picker from GET /models and sends the text box's
// lines to POST /translate, asking for a few alternatives that a button per line shows.
"use strict";

const ALTERNATIVES = 5;
const form = document.getElementById("form");
const picker = document.getElementById("model");
const source = document.getElementById("source");
const button = document.getElementById("translate");
const errorBox = document.getElementById("error");
const output = document.getElementById("output");
const result = document.getElementById("result");
const time = document.getElementById("time");

function showError(message) {
  errorBox.textContent = message;
  errorBox.hidden = false;
}

function clearError() {
  errorBox.hidden = true;
  errorBox.textContent = "";
}

// The server's errors are {"error": "..."}; anything else (a proxy's page, a dropped
// connection) is described by its status.
async function errorOf(response) {
  try {
    const body = await response.json();
    if (body && body.error) return body.error;
  } catch (e) { /* not JSON */ }
  return "the server answered " + response.status + " " + response.statusText;
}

async function loadModels() {
  try {
    const response = await fetch("/models");
    if (!response.ok) throw new Error(await errorOf(response));
    const { models } = await response.json();
    for (const m of models) {
      const option = document.createElement("option");
      option.value = m.name;
      option.textContent = m.name + " (" + m.source_language + " \u2192 " + m.target_language + ", " + m.precision + ")";
      picker.appendChild(option);
    }
    picker.dataset.loaded = "true";
  } catch (e) {
    showError("Could not load the models: " + e.message);
  }
}

function scoreText(score) {
  return score === null || score === undefined ? "" : "log p " + score.toFixed(3);
}

function renderLine(item, index) {
  const li = document.createElement("li");
  const text = document.createElement("span");
  text.className = "translation";
  text.textContent = item.text;
  li.appendChild(text);
  const alternatives = item.n_best || [];
  if (alternatives.length > 1) {
    const toggle = document.createElement("button");
    toggle.type = "button";
    toggle.className = "alternatives-toggle";
    toggle.textContent = "Alternatives";
    toggle.setAttribute("aria-expanded", "false");
    const list = document.createElement("ol");
    list.className = "alternatives";
    list.id = "alternatives-" + index;
    list.hidden = true;
    toggle.setAttribute("aria-controls", list.id);
    for (const h of alternatives) {
      const entry = document.createElement("li");
      entry.textContent = h.text;
      const score = document.createElement("span");
      score.className = "score";
      score.textContent = scoreText(h.score);
      entry.appendChild(score);
      list.appendChild(entry);
    }
    toggle.addEventListener("click", () => {
      list.hidden = !list.hidden;
      toggle.setAttribute("aria-expanded", String(!list.hidden));
    });
    li.appendChild(toggle);
    li.appendChild(list);
  }
  return li;
}

async function translate() {
  clearError();
  const lines = source.value.split(/\r?\n/);
  while (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  if (lines.length === 1 && lines[0].trim() === "") {
    showError("Type a sentence to translate first.");
    source.focus();
    return;
  }
  button.disabled = true;
  button.textContent = "Translating\u2026";
  const started = performance.now();
  try {
    const response = await fetch("/translate", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: picker.value, q: lines, n_best: ALTERNATIVES }),
    });
    if (!response.ok) throw new Error(await errorOf(response));
    const body = await response.json();
    result.replaceChildren(...body.translations.map(renderLine));
    const ms = Math.round(performance.now() - started);
    time.textContent = "(" + ms + " ms; server " + Math.round(body.milliseconds) + " ms)";
    output.hidden = false;
  } catch (e) {
    output.hidden = true;
    showError("Translation failed: " + e.message);
  } finally {
    button.disabled = false;
    button.textContent = "Translate";
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  translate();
});
source.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    translate();
  }
});
loadModels();
