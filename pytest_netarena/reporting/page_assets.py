"""report.html's inline stylesheet and script (the page fetches nothing; its policy admits only this script)."""

CSS = """
:root{--fg:#1b1f24;--muted:#5b6570;--line:#d8dde3;--bg:#fff;--soft:#f5f7f9;--bad:#c62828;--good:#2e7d32;--warn:#ef6c00}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0}
main{max-width:1200px;margin:0 auto;padding:18px 24px 60px}h1{font-size:24px;margin:4px 0 2px}h2{font-size:19px;margin:30px 0 8px;border-bottom:2px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}nav a{margin-right:14px}.muted{color:var(--muted)}code,pre{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table{border-collapse:collapse;margin:6px 0 12px;font-variant-numeric:tabular-nums;display:block;max-width:100%;overflow-x:auto}th,td{border:1px solid var(--line);padding:3px 6px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}td.num{text-align:right}.ci,.bar{white-space:nowrap}.kv td:first-child{font-weight:600;background:var(--soft)}.kv td,code,.episode summary{overflow-wrap:anywhere}
.ci{color:var(--muted);font-size:12px}.charts{display:flex;flex-wrap:wrap;gap:14px}.chart{border:1px solid var(--line);border-radius:6px;padding:6px;background:#fff}
.chart{max-width:100%}.chart svg{display:block;max-width:100%;height:auto}.legend{display:flex;flex-wrap:wrap;column-gap:12px}.legend span{font-size:12px;overflow-wrap:anywhere}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
.badge{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px;font-weight:600;color:#fff;margin-right:6px}
.badge.resolved{background:var(--good)}.badge.unresolved{background:#757575}.badge.unsafe{background:var(--bad)}.badge.agent_error{background:var(--warn)}.badge.infra_error{background:#6a1b9a}
.episode{border:1px solid var(--line);border-radius:6px;margin:6px 0;background:#fff}.episode>details>summary{cursor:pointer;padding:6px 10px;background:var(--soft);border-radius:6px}
.episode .body{padding:6px 12px 10px}.step{border-left:4px solid var(--line);margin:10px 0;padding:2px 10px}.step.unsafe{border-left-color:#ef9a9a}
.step.first-unsafe{border-left-color:var(--bad);background:#fdecea}.step.refused{border-left-color:#ffb74d}.step h4{margin:4px 0;font-size:13px}
.first-flag{color:var(--bad);font-weight:700}pre{white-space:pre-wrap;word-break:break-word;background:var(--soft);padding:6px 8px;margin:2px 0 6px;border-radius:4px;max-height:420px;overflow:auto}
.violations{color:var(--bad);margin:2px 0 6px}.filters{position:sticky;top:0;background:#fff;padding:8px 0;z-index:2;border-bottom:1px solid var(--line)}
.filters button{font-size:13px;padding:3px 8px}.filters input{width:420px;max-width:60vw;padding:5px 8px;font-size:14px}.filters select{padding:4px;font-size:14px}.note{background:#fff8e1;border:1px solid #ffe082;padding:6px 10px;border-radius:4px}.unsandboxed{background:#ffebee;border:2px solid #c62828;color:#b71c1c;padding:8px 12px;border-radius:4px}
@media (max-width:600px){main{padding:12px 12px 40px}}.bar{vertical-align:middle}.lbl{font-size:11px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
"""

SCRIPT = """
(function(){
  var box=document.getElementById('filter'),pick=document.getElementById('outcome-filter'),shown=document.getElementById('shown');
  var items=Array.prototype.slice.call(document.querySelectorAll('.episode')),texts=null;
  function apply(){
    if(texts===null){texts=items.map(function(e){return e.textContent.toLowerCase();});}
    var words=box.value.trim().toLowerCase().split(/\\s+/).filter(Boolean),outcome=pick.value,count=0;
    items.forEach(function(e,i){
      var ok=(!outcome||e.getAttribute('data-outcome')===outcome)&&words.every(function(w){return texts[i].indexOf(w)>=0;});
      e.hidden=!ok;if(ok){count++;}
    });
    shown.textContent=count+' of '+items.length+' episodes shown';
  }
  function openAll(open){items.forEach(function(e){if(!e.hidden){e.querySelector('details').open=open;}});}
  var match=/[#&]filter=([^&]*)/.exec(location.hash);
  if(match){box.value=decodeURIComponent(match[1]);}
  box.addEventListener('input',apply);pick.addEventListener('change',apply);apply();
  document.getElementById('expand').addEventListener('click',function(){openAll(true);});
  document.getElementById('collapse').addEventListener('click',function(){openAll(false);});
  if(/[#&]open=1/.test(location.hash)){openAll(true);}
  if(match){document.getElementById('episodes').scrollIntoView();}
})();
"""
